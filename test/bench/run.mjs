#!/usr/bin/env node
// npm run bench [-- name...]: runs the benchmarks one after another (never in
// parallel: they measure time and memory). test/bench/<name>.bench.mjs are
// plain scripts; <name>.bench.ts are vitest benches when they import vitest,
// plain TypeScript scripts (run with vite-node) when they do not.
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const files = readdirSync(here).filter(f => /\.bench\.(mjs|ts)$/.test(f))
const all = files.map(f => f.replace(/\.bench\.(mjs|ts)$/, '')).sort()
const want = process.argv.slice(2)
const unknown = want.filter(w => !all.includes(w))
if (unknown.length > 0) { console.error(`unknown benchmark(s) ${unknown.join(', ')}; available: ${all.join(', ')}`); process.exit(2) }
let failed = 0
for (const name of want.length > 0 ? want : all) {
  console.log(`\n=== bench: ${name} ===`)
  const file = files.find(f => f.startsWith(`${name}.bench.`))
  const vitestBench = file.endsWith('.ts') && /from ['"]vitest['"]/.test(readFileSync(join(here, file), 'utf8'))
  const r = vitestBench
    ? spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'bench', '--run', join('test', 'bench', file)], { stdio: 'inherit', cwd: root })
    : file.endsWith('.ts')
      ? spawnSync(process.execPath, [join(root, 'node_modules', 'vite-node', 'vite-node.mjs'), join('test', 'bench', file)], { stdio: 'inherit', cwd: root })
      : spawnSync(process.execPath, [join(here, file)], { stdio: 'inherit', cwd: root })
  if (r.status !== 0) { failed++; console.error(`bench ${name} failed (exit ${r.status})`) }
}
console.log('\nresults written to docs/benchmarks.md')
process.exit(failed > 0 ? 1 : 0)
