#!/usr/bin/env node
// Tests train on real data from Debian packages: Fashion-MNIST
// (dataset-fashion-mnist) and the fortunes-min text corpus (fortunes-min, for
// the GPT). If one is missing, install it when we can (root with apt-get),
// else stop with the one command that fixes it. While apt-get works: a bar
// with ETA on a terminal, JSON events otherwise (scripts/apt-progress.mjs).
//   --json          JSON events on stdout, whatever stderr is (the devnet reads them)
//   --only <pkg>    check only this package
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { installWithProgress, reporter } from './apt-progress.mjs'

const FASHION = process.env.PROOFSWARM_FASHION_MNIST ?? '/usr/share/datasets/fashion-mnist'
const FORTUNES = '/usr/share/games/fortunes'
const NEEDS = [
  { pkg: 'dataset-fashion-mnist', what: 'Fashion-MNIST', dir: FASHION, have: () => existsSync(`${FASHION}/train-images-idx3-ubyte.gz`) || existsSync(`${FASHION}/train-images-idx3-ubyte`), hint: '(or set PROOFSWARM_FASHION_MNIST to a directory with the IDX files)' },
  { pkg: 'fortunes-min', what: 'the fortunes-min text corpus', dir: FORTUNES, have: () => ['fortunes', 'literature', 'riddles'].every(f => existsSync(`${FORTUNES}/${f}`)), hint: '' }
]

const argv = process.argv.slice(2)
const json = argv.includes('--json')
const onlyAt = argv.indexOf('--only')
const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
if (onlyAt >= 0 && !NEEDS.some(n => n.pkg === only)) {
  process.stderr.write(`--only: unknown package ${only ?? '(none given)'}; one of ${NEEDS.map(n => n.pkg).join(', ')}\n`)
  process.exit(2)
}
const emit = json ? reporter(process.stdout, false) : reporter(process.stderr, process.stderr.isTTY === true)

const root = typeof process.getuid === 'function' && process.getuid() === 0
const apt = root && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0
for (const n of NEEDS) {
  if ((only != null && n.pkg !== only) || n.have()) continue
  if (apt) await installWithProgress(n.pkg, ev => emit(ev.phase === 'start' ? { ...ev, text: `${n.what} is missing: ${ev.text}` } : ev))
  if (!n.have()) {
    const msg = `${n.what} not found in ${n.dir}.\nInstall it with: sudo apt-get install -y ${n.pkg}\n${n.hint}\n`
    if (json) emit({ package: n.pkg, phase: 'missing', text: msg.trim() })
    process.stderr.write(msg)
    process.exit(1)
  }
}
