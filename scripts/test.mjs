#!/usr/bin/env node
// `npm test` (after the build): vitest's three projects (vitest.config.ts), one after the other. `procs`
// (the files that start processes, each in a fork of its own) first, then `devnet` (the README's main
// command end to end, by itself), then `inproc` (the in-process files,
// CPU-bound, sharing their forks with --no-isolate: tfjs, libp2p and @polkadot imported once per fork;
// test/inproc-setup.ts resets tfjs between files). Side by side (inproc's forks at nice 10) was measured
// on a clean clone on a quiet 2-core machine: procs took both cores, and three inproc files and vitest's
// own calls to its forks timed out. Output: whole lines as they come. Each always runs; the exit code is
// the first failure's. Extra arguments (file filters) go to each.
import { spawn } from 'node:child_process'

const extra = process.argv.slice(2)
// a filter may leave one project without files: that is no failure then
const filtered = extra.length > 0 ? ['--passWithNoTests', ...extra] : []

const children = []
function run (args) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args, ...filtered], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env })
    children.push(child)
    for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
      let partial = ''
      from.setEncoding('utf8')
      from.on('data', d => {
        const text = partial + d
        const end = text.lastIndexOf('\n') + 1
        to.write(text.slice(0, end))
        partial = text.slice(end)
      })
      from.on('end', () => { if (partial !== '') to.write(partial + '\n') })
    }
    child.on('error', err => { process.stderr.write(`${err.message}\n`); resolve(1) })
    child.on('close', code => resolve(code ?? 1))
  })
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { for (const c of children) c.kill(sig) })

const projects = [['procs'], ['devnet'], ['inproc', '--no-isolate']]
const codes = []
for (const [name, ...args] of projects) codes.push(await run(['--project', name, ...args]))
// every result once more, last
process.stdout.write(`\nnpm test: ${projects.map(([name], i) => `${name} ${codes[i] === 0 ? 'passed' : `FAILED (exit ${codes[i]})`}`).join(', ')}\n`)
process.exitCode = codes.find(c => c !== 0) ?? 0
