#!/usr/bin/env node
// `npm run lint`: eslint, the layer rules (dependency-cruiser) and the type-check
// of the tests, run side by side (each is single-threaded: on a 2-core CI machine
// the type-check beside eslint saves ~20 s). Each one's output is printed whole
// when it ends; the exit code is the first failure's, else 0.
import { spawn } from 'node:child_process'

const CHECKS = [
  ['eslint', ['.']],
  ['depcruise', ['protocols', 'actors', 'node', 'devnet', '--config', '.dependency-cruiser.cjs']],
  ['tsc', ['-p', 'tsconfig.test.json']]
]

const runs = CHECKS.map(([bin, args]) => new Promise(resolve => {
  const child = spawn(`node_modules/.bin/${bin}`, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', d => { out += d })
  child.stderr.on('data', d => { out += d })
  child.on('error', err => { out += `${err.message}\n` })
  child.on('close', code => {
    process.stdout.write(`> ${bin} ${args.join(' ')}${code === 0 ? '' : ` (exit ${code})`}\n${out}`)
    resolve(code ?? 1)
  })
}))
const codes = await Promise.all(runs)
process.exitCode = codes.find(c => c !== 0) ?? 0
