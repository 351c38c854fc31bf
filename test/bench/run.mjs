#!/usr/bin/env node
// npm run bench [-- name...]: runs test/bench/<name>.bench.mjs one after
// another (never in parallel: they measure time and memory).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const all = readdirSync(here).filter(f => f.endsWith('.bench.mjs')).map(f => f.replace('.bench.mjs', '')).sort()
const want = process.argv.slice(2)
const unknown = want.filter(w => !all.includes(w))
if (unknown.length > 0) { console.error(`unknown benchmark(s) ${unknown.join(', ')}; available: ${all.join(', ')}`); process.exit(2) }
let failed = 0
for (const name of want.length > 0 ? want : all) {
  console.log(`\n=== bench: ${name} ===`)
  const r = spawnSync(process.execPath, [join(here, `${name}.bench.mjs`)], { stdio: 'inherit' })
  if (r.status !== 0) { failed++; console.error(`bench ${name} failed (exit ${r.status})`) }
}
console.log('\nresults written to docs/benchmarks.md')
process.exit(failed > 0 ? 1 : 0)
