// Training benchmark (not part of `npm test`). Runs the compiled engine
// (npm run build first), each run in its own process so peak RSS is per run:
//   npm run bench -- train [steps] [--reps N] [--no-write]
//   npm run bench -- train --from-json <saved output>   (re-renders the section only)
//   --baseline <checkout with dist/>@<label>: also runs the first configuration's
//   verifiable mode and times the state root with an older build, in the same
//   run (e.g. the tensor commitment before grouped leaves)
// The machine is shared (2 cores, other engineers' jobs), so plain and
// verifiable runs of the same configuration are interleaved (ABBA order) and
// the figure reported is the median of the per-pair ratios; CPU time per step
// (all threads) is reported too, as it depends less on the load. Results go
// to the "Training" section of docs/benchmarks.md (report.ts writeSection).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, writeSection } from './report.js'
import { nativeScriptArgs } from './ts-script.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
let dist = (p: string): string => join(root, 'dist', p)
// a module of a build (this one's, or the baseline's), typed by this source
const load = async <M>(path: string, d = dist): Promise<M> => await import(d(path)) as M

interface Cfg { backend: 'wasm' | 'cpu', model: 'mlp' | 'cnn', batch: number, steps: number, checkpointEvery?: number, mode: string, root?: string, baselineRoot?: string, baselineLabel?: string }
interface RunFigures { samplesPerSec: number, seconds: number, cpuMsPerStep: number, mainCpuMsPerStep: number, inlineJobs?: number, maxRssMiB: number }
interface RootImpl { label: string, fastMs: number, fastCpuMs: number, refMs: number }
interface TapeFigures {
  plainStepMs: number
  stateRootMs: number
  stateRootCpuMs: number
  rootImpls?: RootImpl[]
  tapedStepMs: number
  kernels: number
  maxRssMiB: number
}

// CPU time of the calling thread (Linux /proc, clock ticks of 10 ms): the
// training thread's own cost, which is the wall-clock overhead when the
// hashing thread has a core to itself
function threadCpuMs (): number {
  try {
    const f = readFileSync('/proc/thread-self/stat', 'utf8')
    const v = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return (Number(v[11]) + Number(v[12])) * 10
  } catch { return NaN }
}

async function child (cfg: Cfg): Promise<RunFigures | TapeFigures> {
  const own = cfg.root
  if (own !== undefined) dist = p => join(own, 'dist', p)
  await load('node/polyfill.js')
  const { trainTask } = await load<typeof import('../../node/train/run.js')>('node/train/run.js')
  const { initBackend } = await load<typeof import('../../node/train/backend.js')>('node/train/backend.js')
  const { loadIdxDataset, datasetRef } = await load<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')
  const { newProgram } = await load<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
  const { Trainer } = await load<typeof import('../../node/train/trainer.js')>('node/train/trainer.js')
  const { tapeStep } = await load<typeof import('../../node/train/tape-recorder.js')>('node/train/tape-recorder.js')
  const runtime = cfg.backend === 'cpu' ? 'tfjs-cpu@4.22.0' : 'tfjs-wasm@4.22.0-simd'
  await initBackend(cfg.backend, runtime)
  const ds = loadIdxDataset()
  const program = newProgram({ model: cfg.model, dataset: datasetRef(ds), steps: cfg.steps, batchSize: cfg.batch, optimizer: 'adam', checkpointEvery: cfg.checkpointEvery ?? 100, runtime })
  if (cfg.mode === 'tape') {
    const t = await Trainer.create(program, ds)
    for (let i = 0; i < 3; i++) t.runStep()
    let t0 = performance.now(); for (let i = 0; i < 10; i++) t.runStep(); const plain = (performance.now() - t0) / 10
    const { fastStateRoot } = await load<typeof import('../../node/train/fast-commit.js')>('node/train/fast-commit.js')
    const c0 = process.cpuUsage()
    t0 = performance.now(); for (let i = 0; i < 20; i++) fastStateRoot(t.stateTensors(), t.step); const hash = (performance.now() - t0) / 20
    const c = process.cpuUsage(c0)
    // the same state hashed by this build's and (with --baseline) an older build's implementations, interleaved
    const impls: Array<[string, (p: string) => string]> = [['this build', dist]]
    const baseRoot = cfg.baselineRoot
    if (baseRoot !== undefined) impls.push([cfg.baselineLabel ?? 'baseline', p => join(baseRoot, 'dist', p)])
    type StateRootFn = typeof import('../../protocols/commit/index.js')['stateRoot']
    const roots: Array<{ label: string, fast: StateRootFn, ref: StateRootFn, fastMs: number[], fastCpuMs: number[], refMs: number[] }> = []
    for (const [label, d] of impls) {
      const fast = (await load<typeof import('../../node/train/fast-commit.js')>('node/train/fast-commit.js', d)).fastStateRoot
      const ref = (await load<typeof import('../../protocols/commit/index.js')>('protocols/commit/index.js', d)).stateRoot
      roots.push({ label, fast, ref, fastMs: [], fastCpuMs: [], refMs: [] })
    }
    const ts = t.stateTensors()
    for (let round = 0; round < 5; round++) {
      for (const r of roots) {
        const u0 = process.cpuUsage(); let w0 = performance.now()
        for (let i = 0; i < 20; i++) r.fast(ts, t.step)
        r.fastMs.push((performance.now() - w0) / 20); const u = process.cpuUsage(u0); r.fastCpuMs.push((u.user + u.system) / 1000 / 20)
        w0 = performance.now(); for (let i = 0; i < 4; i++) r.ref(ts, t.step); r.refMs.push((performance.now() - w0) / 4)
      }
    }
    const med = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1] }
    const rootImpls = roots.map(r => ({ label: r.label, fastMs: med(r.fastMs), fastCpuMs: med(r.fastCpuMs), refMs: med(r.refMs) }))
    t0 = performance.now(); let n = 0; for (let i = 0; i < 5; i++) n = tapeStep(t).entries.length; const taped = (performance.now() - t0) / 5
    return {
      plainStepMs: plain, stateRootMs: hash, stateRootCpuMs: (c.user + c.system) / 1000 / 20, rootImpls,
      tapedStepMs: taped, kernels: n - 1, maxRssMiB: process.resourceUsage().maxRSS / 1024
    }
  }
  const out = mkdtempSync(join(tmpdir(), 'ps-bench-'))
  try {
    const c0 = process.cpuUsage()
    const m0 = threadCpuMs()
    const r = await trainTask({ program, outDir: out, dataset: ds, backend: cfg.backend, verifiable: cfg.mode !== 'plain', hashWorker: cfg.mode !== 'inline', evaluate: false })
    const cpu = process.cpuUsage(c0)
    return {
      samplesPerSec: r.samplesPerSec, seconds: r.seconds, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / cfg.steps,
      mainCpuMsPerStep: (threadCpuMs() - m0) / cfg.steps, inlineJobs: r.hashing?.inlineJobs,
      maxRssMiB: process.resourceUsage().maxRSS / 1024
    }
  } finally { rmSync(out, { recursive: true, force: true }) }
}

if (process.argv[2] === '--child') {
  const r = await child(JSON.parse(process.argv[3]) as Cfg)
  process.stdout.write(JSON.stringify(r) + '\n')
  process.exit(0)
}

const args = process.argv.slice(2)
const flag = (name: string, dflt: number): number => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt }
const steps = Number(args.find(a => /^\d+$/.test(a) && args[args.indexOf(a) - 1] !== '--reps') ?? 300)
const reps = flag('--reps', 4)
const write = !args.includes('--no-write')
const baselineArg = args.indexOf('--baseline') >= 0 ? args[args.indexOf('--baseline') + 1] : undefined
const baseline = baselineArg === undefined ? undefined : { root: baselineArg.split('@')[0], label: baselineArg.split('@')[1] ?? 'baseline build' }

// each run in a process of its own, in node alone (its peak RSS is a figure)
const childArgs = await nativeScriptArgs(fileURLToPath(import.meta.url))
function run<F = RunFigures> (cfg: Cfg): F {
  const out = execFileSync(process.execPath, [...childArgs, '--child', JSON.stringify(cfg)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  return JSON.parse(out.trim().split('\n').pop() ?? 'null') as F
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}
const pctOver = (r: number): string => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(0)}%`

// pairs: plain vs verifiable of the same run, interleaved
const { recommendedCheckpointEvery } = await load<typeof import('../../protocols/verification/sample.js')>('protocols/verification/sample.js')
const defaultK = recommendedCheckpointEvery(steps)
interface Pair { name: string, backend: 'wasm' | 'cpu', model: 'mlp' | 'cnn', batch: number, steps: number, reps: number, checkpointEvery?: number, verifiableMode?: string }
const pairs: Pair[] = [
  { name: 'wasm mlp b64', backend: 'wasm', model: 'mlp', batch: 64, steps, reps },
  { name: 'wasm mlp b128', backend: 'wasm', model: 'mlp', batch: 128, steps, reps: Math.max(2, reps >> 1) },
  // the spacing `task new` chooses for this many steps (the verifiers' cost model, protocols/verification/sample.ts)
  { name: `wasm mlp b64, k = ${defaultK} (task new's default)`, backend: 'wasm', model: 'mlp', batch: 64, steps, reps: Math.max(2, reps >> 1), checkpointEvery: defaultK },
  // the devnet's task: 1000 steps at task new's spacing for it
  { name: `wasm mlp b64, the devnet's task (k = ${recommendedCheckpointEvery(1000)})`, backend: 'wasm', model: 'mlp', batch: 64, steps: 1000, reps: 2, checkpointEvery: recommendedCheckpointEvery(1000) },
  { name: 'wasm mlp b64 (hashing inline)', backend: 'wasm', model: 'mlp', batch: 64, steps, reps: 2, verifiableMode: 'inline' },
  // slower steps, so fewer of them; enough (≥ 4 s a run) that the verifiable run's fixed
  // costs (its hashing thread's start, the last checkpoint and the proof) do not dominate
  { name: 'cpu mlp b64', backend: 'cpu', model: 'mlp', batch: 64, steps: Math.ceil(steps / 2), reps: 2 },
  { name: 'wasm cnn b64', backend: 'wasm', model: 'cnn', batch: 64, steps: Math.ceil(steps / 3), reps: 2 }
]
const fromJson = args.indexOf('--from-json') >= 0 ? JSON.parse(readFileSync(args[args.indexOf('--from-json') + 1], 'utf8').trim().split('\n').filter(l => l.startsWith('{"loadBefore"')).pop() ?? 'null') : undefined
const loadBefore = fromJson?.loadBefore ?? loadavg()
type Row = Pair & Record<string, any>
const rows: Row[] = fromJson?.rows ?? []
for (const p of fromJson === undefined ? pairs : []) {
  const base = { backend: p.backend, model: p.model, batch: p.batch, steps: p.steps, checkpointEvery: p.checkpointEvery }
  const plain: RunFigures[] = []; const ver: RunFigures[] = []; const old: RunFigures[] = []
  // the first configuration also runs the baseline build's verifiable mode against the same plain runs
  const withOld = baseline !== undefined && p === pairs[0]
  for (let i = 0; i < p.reps; i++) {
    let order = i % 2 === 0 ? ['plain', 'v'] : ['v', 'plain'] // ABBA
    if (withOld) order = [['plain', 'v', 'old'], ['old', 'v', 'plain'], ['v', 'old', 'plain'], ['plain', 'old', 'v']][i % 4]
    const got: Record<string, RunFigures> = {}
    for (const m of order) got[m] = run({ ...base, mode: m === 'plain' ? 'plain' : (p.verifiableMode ?? 'verifiable'), ...(m === 'old' ? { root: baseline?.root } : {}) })
    plain.push(got.plain); ver.push(got.v); if (withOld) old.push(got.old)
    const fmt = (r: RunFigures): string => `${Math.round(r.samplesPerSec)} (CPU ${r.cpuMsPerStep.toFixed(1)}, training thread ${r.mainCpuMsPerStep.toFixed(1)}, ${Math.round(r.maxRssMiB)} MiB${r.inlineJobs ? `, ${r.inlineJobs} states hashed inline` : ''})`
    console.log(`${p.name.padEnd(30)} pair ${i + 1}: plain ${Math.round(got.plain.samplesPerSec)} samples/s (CPU ${got.plain.cpuMsPerStep.toFixed(1)} ms/step, training thread ${got.plain.mainCpuMsPerStep.toFixed(1)}, ${Math.round(got.plain.maxRssMiB)} MiB)  verifiable ${fmt(got.v)}${withOld ? `  verifiable with ${baseline?.label} ${fmt(got.old)}` : ''}  load ${loadavg()[0].toFixed(1)}`)
  }
  const summarise = (q: Pair & { baseline?: boolean }, ver: RunFigures[]): Row => {
    const wall = plain.map((x, i) => ver[i].seconds / x.seconds)
    const cpu = plain.map((x, i) => ver[i].cpuMsPerStep / x.cpuMsPerStep)
    return {
      ...q,
      plainSps: median(plain.map(x => x.samplesPerSec)), verSps: median(ver.map(x => x.samplesPerSec)),
      wallRatio: median(wall), wallMin: Math.min(...wall), wallMax: Math.max(...wall),
      plainCpu: median(plain.map(x => x.cpuMsPerStep)), verCpu: median(ver.map(x => x.cpuMsPerStep)), cpuRatio: median(cpu),
      plainMain: median(plain.map(x => x.mainCpuMsPerStep)), verMain: median(ver.map(x => x.mainCpuMsPerStep)), mainRatio: median(
        plain.map((x, i) => ver[i].mainCpuMsPerStep / x.mainCpuMsPerStep)
      ),
      plainRss: Math.max(...plain.map(x => x.maxRssMiB)), verRss: Math.max(...ver.map(x => x.maxRssMiB)),
      inlineShare: p.verifiableMode === 'inline' ? 1 : median(ver.map(x => (x.inlineJobs ?? 0) / (p.steps + 1)))
    }
  }
  rows.push(summarise(p, ver))
  if (withOld) rows.push(summarise({ ...p, name: `${p.name}, ${baseline?.label}`, baseline: true }, old))
}
const tape: TapeFigures = fromJson?.tape ?? run<TapeFigures>({ backend: 'wasm', model: 'mlp', batch: 64, steps: 20, mode: 'tape', ...(baseline !== undefined ? { baselineRoot: baseline.root, baselineLabel: baseline.label } : {}) })
const loadAfter = fromJson?.loadAfter ?? loadavg()
for (const r of rows) console.log(`${r.name.padEnd(30)} time ${pctOver(r.wallRatio)} (pairs ${pctOver(r.wallMin)} … ${pctOver(r.wallMax)}), CPU/step ${r.plainCpu.toFixed(1)} → ${r.verCpu.toFixed(1)} ms (${pctOver(r.cpuRatio)}), training thread ${r.plainMain.toFixed(1)} → ${r.verMain.toFixed(1)} ms (${pctOver(r.mainRatio)}), peak RSS ${Math.round(r.plainRss)} / ${Math.round(r.verRss)} MiB`)
for (const r of tape.rootImpls ?? []) console.log(`state root (${r.label}): worker implementation ${r.fastMs.toFixed(2)} ms (CPU ${r.fastCpuMs.toFixed(2)}), protocols/commit ${r.refMs.toFixed(2)} ms`)
console.log(`op tape: plain step ${tape.plainStepMs.toFixed(1)} ms, state root ${tape.stateRootMs.toFixed(1)} ms (CPU ${tape.stateRootCpuMs.toFixed(1)}), taped step ${tape.tapedStepMs.toFixed(0)} ms (${tape.kernels} kernels)`)
console.log(JSON.stringify({ loadBefore, loadAfter, rows, tape }))

if (write) {
  const la = (xs: number[]): string => xs.map(x => x.toFixed(1)).join(' ')
  const table = rows.map(r => `| ${r.name} (${r.steps} steps, ${r.reps} pairs${r.verifiableMode === 'inline' ? '' : `; ${(r.inlineShare * 100).toFixed(0)}% inline`}) | ${Math.round(r.plainSps)} / ${Math.round(r.verSps)} | **${pctOver(r.wallRatio)}** (${pctOver(r.wallMin)} … ${pctOver(r.wallMax)}) | ${r.plainCpu.toFixed(1)} → ${r.verCpu.toFixed(1)} (${pctOver(r.cpuRatio)}) | ${r.plainMain.toFixed(1)} → ${r.verMain.toFixed(1)} (${pctOver(r.mainRatio)}) | ${Math.round(r.plainRss)} / ${Math.round(r.verRss)} MiB |`).join('\n')
  const b64 = rows[0]
  const old = rows.find(r => r.baseline)
  const impl = tape.rootImpls ?? []
  const rootRow = (r: RootImpl): string => `${r.fastCpuMs.toFixed(2)} ms CPU (${r.fastMs.toFixed(2)} ms wall) in the hashing thread's implementation, ${r.refMs.toFixed(1)} ms in protocols/commit`
  writeSection('Training', `
Latest run: ${new Date().toISOString().slice(0, 10)}, \`npm run bench -- train\` (${machine()}; load average ${la(loadBefore)} before, ${la(loadAfter)} after — the 2 cores are shared with other engineers' jobs).
Fashion-MNIST, Adam, checkpoints every 100 steps unless the row names k. Each run is its own process; plain and verifiable runs of the same
configuration alternate (ABBA), and the overhead is the median over pairs of the verifiable/plain wall-time ratio
(range in brackets). "verifiable" = state root after every step + checkpoints + proof, hashed in the worker thread
(unless "inline"; when the worker is 4 states behind, the training thread hashes the next state itself — the
median share of such states is in brackets after the configuration). CPU ms/step: all threads of the process, and the training thread alone (/proc/thread-self,
10 ms ticks) — the latter is what verifiable training costs in wall time when the hashing thread has a core.

| configuration | samples/s plain / verifiable (median) | time overhead (median, range) | CPU ms/step, all threads | CPU ms/step, training thread | peak RSS plain / verifiable |
|---|---|---|---|---|---|
${table}

| measure | result | goal | result / goal |
|---|---|---|---|
| verifiable vs plain, wasm mlp b64: wall time on this loaded machine | ${pctOver(b64.wallRatio)} (pairs ${pctOver(b64.wallMin)} … ${pctOver(b64.wallMax)}) | ≤ +10% | ${((b64.wallRatio - 1) / 0.10).toFixed(1)} |
| samples/s overhead, the worst median of the configurations above with the hashing thread | ${(() => { const w = rows.filter(r => r.verifiableMode !== 'inline' && !r.baseline).reduce((a, r) => r.wallRatio > a.wallRatio ? r : a); return `${pctOver(w.wallRatio)} (${w.name})` })()} | ≤ +10% | ${((Math.max(...rows.filter(r => r.verifiableMode !== 'inline' && !r.baseline).map(r => r.wallRatio)) - 1) / 0.10).toFixed(1)} |
| … training-thread CPU (= wall time when the hashing thread has a free core) | ${pctOver(b64.mainRatio)} | ≤ +10% | ${((b64.mainRatio - 1) / 0.10).toFixed(1)} |
| … CPU of all threads (= wall time on one core; not the issue's measure, which is samples/s — the known cost, docs/training.md "What remains") | ${pctOver(b64.cpuRatio)} | | |
| peak RSS, mlp b64 verifiable | ${Math.round(b64.verRss)} MiB (plain ${Math.round(b64.plainRss)}) | ≤ 250 MiB | ${(b64.verRss / 250).toFixed(2)} |
| state root of the Adam mlp state (3 × 101,770 floats + 2 scalars), first 20 roots, each reading the state out of the wasm heap | ${tape.stateRootMs.toFixed(1)} ms (CPU ${tape.stateRootCpuMs.toFixed(1)} ms) vs a plain b64 step ${tape.plainStepMs.toFixed(1)} ms | | |
${[...impl.map(r => `| … the root alone of one state read once, ${r.label} (medians of 5 interleaved rounds of 20, warm) | ${rootRow(r)} | | |`),
  // (a blank line would end the markdown table)
  ...(old === undefined ? [] : [`| all-thread CPU per step, wasm mlp b64: this build vs ${baseline?.label ?? 'baseline'} (same plain runs) | ${b64.verCpu.toFixed(1)} (${pctOver(b64.cpuRatio)}) vs ${old.verCpu.toFixed(1)} ms (${pctOver(old.cpuRatio)}) | ≤ +10% | ${((b64.cpuRatio - 1) / 0.10).toFixed(1)} |`])].join('\n')}
| op-tape recording of one Adam step vs a plain step | ${tape.tapedStepMs.toFixed(0)} ms vs ${tape.plainStepMs.toFixed(1)} ms (${tape.kernels} kernels) | | |
| wasm vs cpu, mlp b64 plain (CPU ms/step) | ${((rows.find(r => r.backend === 'cpu')?.plainCpu ?? NaN) / b64.plainCpu).toFixed(1)}× less CPU on wasm | | |
| mlp Fashion-MNIST test accuracy (Adam 1e-3, b128, 938 steps, verifiable; test/integration/train-fashion.test.ts) | 85.55% | ≥ 84% | |
| tfjs-node / tfjs-node-gpu | not installable here (install script downloads libtensorflow) | | |

Where the verifiable mode's cost goes (docs/training.md "Verifiable mode: cost"): the training thread copies the
state out of the wasm heap into a state slot (~0.1–0.3 ms), a SharedArrayBuffer it shares with the hashing thread
(transferring buffers instead had slowed every JavaScript kernel of the training thread 20–25%: the cpu and cnn
rows were +14% and +12% before this run), which computes the state root and writes checkpoints; when that thread
is 4 states behind, the training thread hashes the next state itself instead of waiting. The root is the tensor commitment protocols/commit defines, version 2
since this run: a Merkle tree per tensor over its rows and one over its columns whose leaves are groups of
consecutive rows (columns) of about 2 KiB (LEAF_BYTES), ~2.0k sha256 calls per step for the Adam mlp instead of
~7k (version 1: one leaf per row and per column; the "${baseline?.label ?? 'baseline'}" row, when present, is that
build run in the same session against the same plain runs). What is left is mostly bytes: both trees read every
byte of the 1.2 MB state, ~2.4 MB of sha256 per step at ~1.9 GB/s (≥ 1.3 ms), plus the column gathers. With a
free core the hashing overlaps training (training-thread column); on this shared machine there is rarely one, and
under contention the kernel gives the process one CPU budget however many threads it runs, so the extra CPU
(all-threads column) becomes wall time.
`)
  console.log('written to docs/benchmarks.md (Training)')
}
