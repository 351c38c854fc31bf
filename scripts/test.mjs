#!/usr/bin/env node
// `npm test` (after the build): vitest's two projects (vitest.config.ts) side by side, each its own
// vitest run. `procs` (the files that start processes, each in a fork of its own) mostly waits on
// blocks and windows; `inproc` (the in-process files, CPU-bound, sharing their forks with
// --no-isolate: tfjs, libp2p and @polkadot imported once per fork; test/inproc-setup.ts resets tfjs
// between files) runs beside it with its forks at a lower CPU priority (nice INPROC_NICE, set by
// test/inproc-setup.ts from PROOFSWARM_TEST_NICE), so they take the CPU the procs files leave idle and
// never slow a swarm's peers past their deadlines. Its vitest process itself keeps the normal
// priority: a starved one left a fork's calls to it unanswered for 60 s (vitest's RPC timeout).
// Output: whole lines from either run as they come (each file's line names its project). Both
// always run; the exit code is the first failure's. Extra arguments (file filters) go to both.
import { spawn } from 'node:child_process'

const INPROC_NICE = 10
const extra = process.argv.slice(2)
// a filter may leave one project without files: that is no failure then
const filtered = extra.length > 0 ? ['--passWithNoTests', ...extra] : []

const children = []
function run (args, env = {}) {
  return new Promise(resolve => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args, ...filtered], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
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

const codes = await Promise.all([run(['--project', 'procs']), run(['--project', 'inproc', '--no-isolate'], { PROOFSWARM_TEST_NICE: String(INPROC_NICE) })])
// the two summaries came wherever each run ended: both results once more, last
process.stdout.write(`\nnpm test: procs ${codes[0] === 0 ? 'passed' : `FAILED (exit ${codes[0]})`}, inproc ${codes[1] === 0 ? 'passed' : `FAILED (exit ${codes[1]})`}\n`)
process.exitCode = codes.find(c => c !== 0) ?? 0
