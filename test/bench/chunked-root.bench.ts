// The chunked state root (protocols/commit/chunked.ts: every byte hashed once,
// in 4 KiB leaves) against the row + column state root the trainer commits
// today (each byte hashed twice, plus the column transposes), on the Adam mlp's
// state (14 tensors, 1.2 MB), side by side in one process: blocks of roots
// alternating ABBA, CPU time per root (process.cpuUsage: the hashing runs on
// this thread), ratios per round and their median, since the machine is shared.
// The training loop's implementations (node/train/fast-commit.ts: the psk
// addon's 16-lane sha256 where built) and, in a child process with the addon
// off, their JavaScript fallbacks; protocols/commit's reference code too.
// Writes the "Chunked state roots" section of docs/benchmarks.md.
// Run: npm run bench -- chunked-root [--rounds R] (pin it with taskset -c N for one core).
import { spawnSync } from 'node:child_process'
import { availableParallelism, loadavg } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './report.js'
import { BENCH_DIR, ROOT, fromDist, tsScriptArgs } from './ts-script.js'
const { fastStateRoot, fastChunkedStateRoot, chunkedRootPath } = await fromDist<typeof import('../../node/train/fast-commit.js')>('node/train/fast-commit.js')
const { nativeAxisRoots } = await fromDist<typeof import('../../node/train/psk-addon.js')>('node/train/psk-addon.js')
const { stateRoot, chunkedStateRoot, toHex } = await fromDist<typeof import('../../protocols/commit/index.js')>('protocols/commit/index.js')
const { newProgram, initialState } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
const { datasetRef, syntheticDataset } = await fromDist<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')

const argv = process.argv.slice(2)
const opt = (name: string, d: number): number => { const i = argv.indexOf(name); return i >= 0 ? Number(argv[i + 1]) : d }
const ROUNDS = opt('--rounds', 12)
const child = argv.includes('--child')
const BLOCK = 16

const program = newProgram({ model: 'mlp', optimizer: 'adam', dataset: datasetRef(syntheticDataset(1, 64, 16)), steps: 1000, batchSize: 64 })
const state = initialState(program)
// trained-looking values: the moments are zeros at step 0, which hash no faster, but fill them anyway
let seed = 7
for (const t of state) {
  if (!(t.values instanceof Float32Array)) continue
  for (let i = 0; i < t.values.length; i++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; t.values[i] = seed / 2 ** 32 - 0.5 }
}
const bytes = state.reduce((n, t) => n + t.values.byteLength, 0)

type RootFn = (ts: typeof state, step: number) => Uint8Array
function cpuPerRoot (fn: RootFn): number {
  const t0 = process.cpuUsage()
  for (let i = 0; i < BLOCK; i++) fn(state, i)
  const d = process.cpuUsage(t0)
  return (d.user + d.system) / 1000 / BLOCK
}
function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

interface Pair { fine: number, chunked: number, ratio: number, rounds: number }
/** ABBA rounds of fine (row + column) and chunked roots: median ms of CPU per root and the median per-round ratio. */
function sideBySide (fine: RootFn, chunked: RootFn, rounds: number): Pair {
  for (let i = 0; i < 3; i++) { fine(state, 0); chunked(state, 0) } // warm up: compile, plans, addon load
  const f: number[] = []; const c: number[] = []; const r: number[] = []
  for (let k = 0; k < rounds; k++) {
    const a1 = cpuPerRoot(fine); const b1 = cpuPerRoot(chunked); const b2 = cpuPerRoot(chunked); const a2 = cpuPerRoot(fine)
    f.push((a1 + a2) / 2); c.push((b1 + b2) / 2); r.push((b1 + b2) / (a1 + a2))
  }
  return { fine: median(f), chunked: median(c), ratio: median(r), rounds }
}

// the fast roots are protocols/commit's roots, or the comparison means nothing
if (toHex(fastStateRoot(state, 3)) !== toHex(stateRoot(state, 3))) throw new Error('fastStateRoot differs from protocols/commit')
if (toHex(fastChunkedStateRoot(state, 3)) !== toHex(chunkedStateRoot(state, 3))) throw new Error('fastChunkedStateRoot differs from protocols/commit')

const fast = sideBySide(fastStateRoot, fastChunkedStateRoot, ROUNDS)
const path = chunkedRootPath()
if (child) {
  // the JavaScript fallbacks' figures for the parent
  console.log(JSON.stringify({ fast, path }))
  process.exit(0)
}
const axis = nativeAxisRoots() !== undefined ? 'native' : 'js'
const load0 = loadavg()[0]
console.log(`Adam mlp state: ${state.length} tensors, ${(bytes / 1e6).toFixed(2)} MB; training-loop roots (row + column: ${axis}, chunked: ${path}), ${ROUNDS} ABBA rounds of ${BLOCK}`)
console.log(`  row + column ${fast.fine.toFixed(3)} ms CPU/root, chunked ${fast.chunked.toFixed(3)} ms, median ratio ${fast.ratio.toFixed(3)}`)

const sub = spawnSync(process.execPath, tsScriptArgs(join(BENCH_DIR, 'chunked-root.bench.ts'), ['--child', '--rounds', String(Math.max(2, ROUNDS >> 1))]), { encoding: 'utf8', cwd: ROOT, env: { ...process.env, PROOFSWARM_PSK_NATIVE: '0' } })
const js = sub.status === 0 ? JSON.parse(sub.stdout.trim().split('\n').pop() ?? '{}') as { fast: Pair, path: string } : undefined
if (js !== undefined) console.log(`  JavaScript fallbacks (child, addon off): row + column ${js.fast.fine.toFixed(3)} ms, chunked ${js.fast.chunked.toFixed(3)} ms, median ratio ${js.fast.ratio.toFixed(3)}`)
else console.error(`the JavaScript child failed: ${sub.stderr.slice(-400)}`)

const ref = sideBySide(stateRoot, chunkedStateRoot, Math.max(2, ROUNDS >> 2))
console.log(`  protocols/commit (reference): row + column ${ref.fine.toFixed(3)} ms, chunked ${ref.chunked.toFixed(3)} ms, median ratio ${ref.ratio.toFixed(3)}`)
const load1 = loadavg()[0]
const row = (what: string, p: Pair): string => `| ${what} | ${p.fine.toFixed(3)} | ${p.chunked.toFixed(3)} | ${p.ratio.toFixed(3)} | ${((p.fine - p.chunked) / 8).toFixed(3)} | ${p.rounds} |`
const body = `Run: \`npm run bench -- chunked-root\` (test/bench/chunked-root.bench.ts), ${new Date().toISOString().slice(0, 10)}, ${machine()}; the process could use ${availableParallelism()} core(s); load average ${load0.toFixed(1)} before, ${load1.toFixed(1)} after (the machine is shared).
The state root of the Adam mlp's state (${state.length} tensors, ${(bytes / 1e6).toFixed(2)} MB) as the trainer commits it (row + column
commitment of every tensor: each byte hashed twice, the columns transposed) and as the chunked design would (protocols/commit/chunked.ts,
docs/training.md "Chunked roots: design": every byte hashed once in ${4096}-byte leaves; not yet what the trainer commits). CPU time per
root on the bench's one thread, blocks of ${BLOCK} roots alternating ABBA in one process; ms are medians over the rounds, ratios the median
of the per-round ratios. "Saved per step" is (row + column − chunked) / 8: one committed state every 8 steps (DEFAULT_ROOT_EVERY).

| implementation | row + column ms/root | chunked ms/root | ratio chunked / row + column | saved per step at m = 8 (ms) | rounds |
|---|---|---|---|---|---|
${row(`training loop (node/train/fast-commit.ts; row + column: ${axis}, chunked: ${path})`, fast)}
${js !== undefined ? row('training loop, JavaScript fallbacks (addon off, child process)', js.fast) : '| JavaScript fallbacks | (child failed) | | | | |'}
${row('protocols/commit (reference code)', ref)}
`
writeSection('Chunked state roots', body)
