// State roots every m steps, on ONE core (not part of `npm test`):
//   npm run bench -- segments [steps] [--reps N] [--no-write]
// What verifiable training would cost if the proof committed the state root
// after every m-th step only (docs/training.md "State roots every m steps"),
// for m = 1, 2, 4, 8, against plain training of the same steps. Every run is a
// process of its own pinned to core 0 (taskset -c 0), so the hashing cannot
// hide on a second core; hashing is inline (a worker thread on the same core
// only adds hand-over costs). The runs of one round alternate their order and
// each ratio is against the plain run of the same round; the figure is the
// median over rounds. The loop is the trainer's (Trainer.runStep, the state
// copied into a slot, StateHasher inline, checkpoints written at the same
// steps, the NaN watch); the real trainer (trainTask, hashing inline) is measured beside it
// at m = 1 and m = 4 and plain (verifiable: false), its figures the CPU of its training
// loop (TrainResult.cpuSeconds), so trainTask at m = 4 against trainTask plain is the goal's
// figure. Results: docs/benchmarks.md, section "Training: state roots every m steps".
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { machine, writeSection } from './report.js'
import { fromDist, nativeScriptArgs } from './ts-script.js'

/**
 * m = 0: plain (no roots); 'watch': the NaN watch alone (no roots); 'trainTask' / 'trainTask4': the real verifiable
 * path at m = 1 / m = 4, hashing inline; 'plainTask': trainTask without a proof (verifiable: false)
 */
interface Cfg { steps: number, checkpointEvery: number, m: number | 'watch' | 'trainTask' | 'trainTask4' | 'plainTask' }
interface Figures { seconds: number, cpuMs: number, roots: number }

async function child (cfg: Cfg): Promise<Figures> {
  await fromDist('node/polyfill.js')
  const { initBackend } = await fromDist<typeof import('../../node/train/backend.js')>('node/train/backend.js')
  const { loadIdxDataset, datasetRef } = await fromDist<typeof import('../../node/train/dataset.js')>('node/train/dataset.js')
  const { newProgram, programHash } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
  const { Trainer } = await fromDist<typeof import('../../node/train/trainer.js')>('node/train/trainer.js')
  const { StateHasher } = await fromDist<typeof import('../../node/train/state-hasher.js')>('node/train/state-hasher.js')
  const { trainTask } = await fromDist<typeof import('../../node/train/run.js')>('node/train/run.js')
  const { sizeOf } = await fromDist<typeof import('../../protocols/commit/tensor.js')>('protocols/commit/tensor.js')
  const { NanWatch } = await fromDist<typeof import('../../node/train/nan-watch.js')>('node/train/nan-watch.js')
  await initBackend('wasm', 'tfjs-wasm@4.22.0-simd')
  const ds = loadIdxDataset()
  const rootEvery = cfg.m === 'trainTask4' ? 4 : 1
  const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: cfg.steps, batchSize: 64, optimizer: 'adam', checkpointEvery: cfg.checkpointEvery, rootEvery })
  const out = mkdtempSync(join(tmpdir(), 'ps-segments-'))
  try {
    if (cfg.m === 'trainTask' || cfg.m === 'trainTask4' || cfg.m === 'plainTask') {
      // the loop's own CPU (trainTask measures it), not the set-up's or the model's saving
      const r = await trainTask({ program, outDir: out, dataset: ds, backend: 'wasm', hashWorker: false, evaluate: false, verifiable: cfg.m !== 'plainTask' })
      if (cfg.m !== 'plainTask' && !r.proofWritten) throw new Error('no proof written')
      return { seconds: r.seconds, cpuMs: r.cpuSeconds * 1000, roots: cfg.m === 'plainTask' ? 0 : Math.ceil(cfg.steps / rootEvery) + 1 }
    }
    const m = cfg.m === 'watch' ? 0 : cfg.m
    const t = await Trainer.create(program, ds)
    const hasher = new StateHasher({ worker: false })
    // a verifiable run watches every op for a NaN whatever m is (a NaN ends the run at its step)
    const watch = m > 0 || cfg.m === 'watch' ? new NanWatch() : undefined
    const sizes = t.stateLayout().map(x => sizeOf(x.shape))
    const names = t.stateNames()
    const phash = programHash(program)
    const results: Array<Promise<unknown>> = []
    const submit = async (s: number): Promise<void> => {
      const checkpoint = s === 0 || s % cfg.checkpointEvery === 0 || s === cfg.steps
      const { result } = await hasher.submit({
        step: s, tensors: t.stateCopies(hasher.buffers(sizes)), checkpoint: checkpoint ? { runDir: out, programHash: phash, names } : undefined
      })
      results.push(result)
    }
    // timed like trainTask: from after the initial state to the last step's root
    if (m > 0) await submit(0)
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    while (t.step < cfg.steps) {
      if (watch !== undefined) watch.seen = false
      t.runStep()
      if (watch?.seen === true) throw new Error(`step ${t.step} made a NaN`)
      if (m > 0 && (t.step % m === 0 || t.step === cfg.steps)) await submit(t.step)
    }
    await Promise.all(results)
    const seconds = (performance.now() - t0) / 1000
    const c = process.cpuUsage(c0)
    watch?.dispose()
    await hasher.close()
    t.dispose()
    return { seconds, cpuMs: (c.user + c.system) / 1000, roots: results.length }
  } finally { rmSync(out, { recursive: true, force: true }) }
}

if (process.argv[2] === '--child') {
  const r = await child(JSON.parse(process.argv[3]) as Cfg)
  process.stdout.write(JSON.stringify(r) + '\n')
  process.exit(0)
}

const args = process.argv.slice(2)
const flag = (name: string, dflt: number): number => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt }
const steps = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--reps') ?? 320)
const reps = flag('--reps', 4)
const write = !args.includes('--no-write')
// a multiple of every m measured, so every checkpoint is a committed state
const checkpointEvery = 80
if (!Number.isInteger(steps) || steps < 16 || steps % 8 !== 0) throw new Error(`steps must be a multiple of 8 (≥ 16), got ${steps}`)

const childArgs = await nativeScriptArgs(fileURLToPath(import.meta.url))
function run (cfg: Cfg): Figures {
  const out = execFileSync('taskset', ['-c', '0', process.execPath, ...childArgs, '--child', JSON.stringify(cfg)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  return JSON.parse(out.trim().split('\n').pop() ?? 'null') as Figures
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 === 1 ? s[k] : (s[k - 1] + s[k]) / 2
}
const pctOver = (r: number): string => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`

const configs: Array<Cfg['m']> = [0, 1, 2, 4, 8, 'watch', 'plainTask', 'trainTask', 'trainTask4']
const LABELS: Record<string, string> = {
  0: 'plain', trainTask: 'm = 1 through trainTask (inline)', trainTask4: 'm = 4 through trainTask (inline)', plainTask: 'trainTask plain (no proof)', watch: 'the NaN watch alone, no roots'
}
const label = (m: Cfg['m']): string => LABELS[String(m)] ?? `m = ${m}`
const runs = new Map<Cfg['m'], Figures[]>(configs.map(m => [m, []]))
const loadBefore = loadavg()
for (let r = 0; r < reps; r++) {
  // rotate the order so no configuration always runs first or last
  const order = configs.map((_, i) => configs[(i + r) % configs.length])
  if (r % 2 === 1) order.reverse()
  const got = new Map<Cfg['m'], Figures>()
  for (const m of order) got.set(m, run({ steps, checkpointEvery, m }))
  for (const [m, f] of got) runs.get(m)?.push(f)
  console.log(`round ${r + 1}: ${configs.map(m => `${label(m)} ${(got.get(m)?.seconds ?? NaN).toFixed(2)} s`).join(', ')}  load ${loadavg()[0].toFixed(1)}`)
}
const loadAfter = loadavg()
const plain = runs.get(0) ?? []
const rows = configs.filter(m => m !== 0).map(m => {
  const v = runs.get(m) ?? []
  const wall = v.map((x, i) => x.seconds / plain[i].seconds)
  const cpu = v.map((x, i) => x.cpuMs / plain[i].cpuMs)
  return {
    m, label: label(m), roots: v[0].roots, wall: median(wall), wallMin: Math.min(...wall), wallMax: Math.max(...wall),
    cpu: median(cpu), msPerStep: median(v.map(x => x.cpuMs / steps))
  }
})
const plainMs = median(plain.map(x => x.cpuMs / steps))
// the goal's figure: the real trainer at m (1, 4) against the real trainer without a proof, round by round
const realRows = (['trainTask', 'trainTask4'] as const).map(m => {
  const v = runs.get(m) ?? []
  const base = runs.get('plainTask') ?? []
  const cpu = v.map((x, i) => x.cpuMs / base[i].cpuMs)
  const wall = v.map((x, i) => x.seconds / base[i].seconds)
  return { m, label: label(m), cpu: median(cpu), cpuMin: Math.min(...cpu), cpuMax: Math.max(...cpu), wall: median(wall) }
})
for (const r of rows) console.log(`${r.label.padEnd(34)} wall ${pctOver(r.wall)} (rounds ${pctOver(r.wallMin)} … ${pctOver(r.wallMax)}), CPU ${pctOver(r.cpu)}, ${r.msPerStep.toFixed(2)} ms CPU/step (plain ${plainMs.toFixed(2)}), ${r.roots} roots`)
for (const r of realRows) console.log(`${r.label} vs trainTask plain: CPU ${pctOver(r.cpu)} (rounds ${pctOver(r.cpuMin)} … ${pctOver(r.cpuMax)}), wall ${pctOver(r.wall)}`)
console.log(JSON.stringify({ loadBefore, loadAfter, plainMs, rows, realRows }))

if (write) {
  const la = (xs: number[]): string => xs.map(x => x.toFixed(1)).join(' ')
  const first = rows.find(r => typeof r.m === 'number' && r.cpu <= 1.10)
  writeSection('Training: state roots every m steps', `
Latest run: ${new Date().toISOString().slice(0, 10)}, \`npm run bench -- segments ${steps} --reps ${reps}\` (${machine()}; load average ${la(loadBefore)} before, ${la(loadAfter)} after).
Fashion-MNIST mlp 784-128-10, Adam, batch 64, ${steps} steps, checkpoints every ${checkpointEvery} steps, **every run a process of its own
pinned to one core** (\`taskset -c 0\`), hashing inline. "m" = the state root is computed after every m-th step only (and
the last), as a proof with \`rootEvery\` m would commit it (docs/training.md "State roots every m steps"); checkpoints are
written at the same steps in every configuration (not in "the NaN watch alone", which shows the floor no m removes). The loop is the trainer's own (Trainer.runStep under the NaN watch, the state copied
into a slot, StateHasher inline); the trainTask rows are the real path (\`trainTask\`, hashing inline, its training loop's
CPU): verifiable at m = 1 and at m = 4 (a program with \`rootEvery\` 4: only every 4th state hashed) and plain. Each round runs
every configuration once in a rotating order; overheads are medians over rounds of the ratio to the plain run of the
same round (range in brackets). CPU = all threads of the process (on one core, what the overhead costs in time when
the core is not shared with other work; with other jobs on core 0, as at a load average well above 2, the wall times
are noise and CPU is the figure).

| configuration | state roots | wall time vs plain (median, range) | CPU vs plain | CPU ms/step (plain ${plainMs.toFixed(2)}) |
|---|---|---|---|---|
${rows.map(r => `| ${r.label} | ${r.roots} | ${pctOver(r.wall)} (${pctOver(r.wallMin)} … ${pctOver(r.wallMax)}) | **${pctOver(r.cpu)}** | ${r.msPerStep.toFixed(2)} |`).join('\n')}

| measure | result | goal | result / goal |
|---|---|---|---|
${rows.filter(r => typeof r.m === 'number').map(r => `| verifiable on one core, ${r.label}: CPU over plain | ${pctOver(r.cpu)} | ≤ +10% | ${((r.cpu - 1) / 0.10).toFixed(1)} |`).join('\n')}
| the smallest measured m within +10% of CPU | ${first === undefined ? 'none' : String(first.m)} | | |
${realRows.map(r => `| **the real trainer**, ${r.label} vs trainTask plain: CPU (rounds) | **${pctOver(r.cpu)}** (${pctOver(r.cpuMin)} … ${pctOver(r.cpuMax)}) | ≤ +10% | ${((r.cpu - 1) / 0.10).toFixed(1)} |`).join('\n')}
| the NaN watch alone (every verifiable run has it, whatever m): CPU over plain | ${(() => { const w = rows.find(r => r.m === 'watch'); return w === undefined ? 'n/a' : pctOver(w.cpu) })()} | | |

\`train\` trains a program with \`rootEvery\` m > 1 (\`task new --root-every\`); the dev chain takes m up to its
\`max_root_every\` (default 64) and the node plays every dispute such a task can have (docs/disputes.md "Segments").
`)
  console.log('written to docs/benchmarks.md (Training: state roots every m steps)')
}
