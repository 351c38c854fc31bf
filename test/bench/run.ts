// npm run bench [-- name... [-- args]]: runs the benchmarks one after another
// (never in parallel: they measure time and memory). test/bench/<name>.bench.ts
// are plain TypeScript scripts run with vite-node (ts-script.ts), except those
// that import vitest, which are vitest benches (`vitest bench`). The leading
// arguments that name benches choose them; the rest go to every bench chosen
// (`npm run bench -- train 200 --reps 2`).
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BENCH_DIR, ROOT, tsScriptArgs } from './ts-script.js'

const files = readdirSync(BENCH_DIR).filter(f => f.endsWith('.bench.ts'))
const all = files.map(f => f.slice(0, -'.bench.ts'.length)).sort()
const argv = process.argv.slice(2)
const split = argv.findIndex(a => !all.includes(a))
const want = split < 0 ? argv : argv.slice(0, split)
const args = split < 0 ? [] : argv.slice(split)
if (want.length === 0 && args.length > 0) { console.error(`unknown benchmark ${args[0]}; available: ${all.join(', ')}`); process.exit(2) }

const isVitestBench = (file: string): boolean => /from 'vitest'/.test(readFileSync(join(BENCH_DIR, file), 'utf8'))

let failed = 0
for (const name of want.length > 0 ? want : all) {
  console.log(`\n=== bench: ${name} ===`)
  const file = `${name}.bench.ts`
  const r = isVitestBench(file)
    ? spawnSync(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'bench', '--run', join('test', 'bench', file), ...args], { stdio: 'inherit', cwd: ROOT })
    : spawnSync(process.execPath, tsScriptArgs(join(BENCH_DIR, file), args), { stdio: 'inherit', cwd: ROOT })
  if (r.status !== 0) { failed++; console.error(`bench ${name} failed (exit ${r.status ?? r.signal})`) }
}
console.log('\nresults written to docs/benchmarks.md')
process.exit(failed > 0 ? 1 : 0)
