#!/usr/bin/env node
// Tests train on real data from Debian packages: Fashion-MNIST
// (dataset-fashion-mnist) and the fortunes-min text corpus (fortunes-min, for
// the GPT). If one is missing, install it when we can (root with apt-get),
// else stop with the one command that fixes it.
import { existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'

const FASHION = process.env.PROOFSWARM_FASHION_MNIST ?? '/usr/share/datasets/fashion-mnist'
const FORTUNES = '/usr/share/games/fortunes'
const NEEDS = [
  { pkg: 'dataset-fashion-mnist', what: 'Fashion-MNIST', dir: FASHION, have: () => existsSync(`${FASHION}/train-images-idx3-ubyte.gz`) || existsSync(`${FASHION}/train-images-idx3-ubyte`), hint: '(or set PROOFSWARM_FASHION_MNIST to a directory with the IDX files)' },
  { pkg: 'fortunes-min', what: 'the fortunes-min text corpus', dir: FORTUNES, have: () => ['fortunes', 'literature', 'riddles'].every(f => existsSync(`${FORTUNES}/${f}`)), hint: '' }
]

const root = typeof process.getuid === 'function' && process.getuid() === 0
const apt = root && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0
for (const n of NEEDS) {
  if (n.have()) continue
  if (apt) {
    process.stderr.write(`${n.what} is missing: installing the Debian package ${n.pkg}…\n`)
    const r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', n.pkg], { stdio: 'inherit' })
    if (r.status !== 0) spawnSync('sh', ['-c', `apt-get update && apt-get install -y --no-install-recommends ${n.pkg}`], { stdio: 'inherit' })
  }
  if (!n.have()) {
    process.stderr.write(`${n.what} not found in ${n.dir}.\nInstall it with: sudo apt-get install -y ${n.pkg}\n${n.hint}\n`)
    process.exit(1)
  }
}
