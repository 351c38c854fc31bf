#!/usr/bin/env node
// Training benchmark (not part of `npm test`). Runs the compiled engine
// (npm run build first), each configuration in its own process so peak RSS
// is per configuration:  node test/bench/train.bench.mjs [steps]
// Prints a table and a JSON line; figures go to docs/benchmarks.md ("Training").
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dist = p => join(root, 'dist', p)

async function child (cfg) {
  await import(dist('node/polyfill.js'))
  const { trainTask } = await import(dist('node/train/run.js'))
  const { initBackend } = await import(dist('node/train/backend.js'))
  const { loadIdxDataset, datasetRef } = await import(dist('node/train/dataset.js'))
  const { newProgram } = await import(dist('protocols/program/index.js'))
  const { Trainer } = await import(dist('node/train/trainer.js'))
  const { traceStep } = await import(dist('node/train/tracer.js'))
  const runtime = cfg.backend === 'cpu' ? 'tfjs-cpu@4.22.0' : 'tfjs-wasm@4.22.0-simd'
  await initBackend(cfg.backend, runtime)
  const ds = loadIdxDataset()
  const program = newProgram({ model: cfg.model, dataset: datasetRef(ds), steps: cfg.steps, batchSize: cfg.batch, optimizer: 'adam', checkpointEvery: 100, runtime })
  if (cfg.mode === 'trace') {
    const t = await Trainer.create(program, ds)
    for (let i = 0; i < 3; i++) t.runStep()
    let t0 = performance.now(); for (let i = 0; i < 10; i++) t.runStep(); const plain = (performance.now() - t0) / 10
    const { fastStateRoot } = await import(dist('node/train/fast-commit.js'))
    t0 = performance.now(); for (let i = 0; i < 10; i++) fastStateRoot(t.stateTensors(), t.step); const hash = (performance.now() - t0) / 10
    t0 = performance.now(); let n = 0; for (let i = 0; i < 5; i++) n = traceStep(t).entries.length; const traced = (performance.now() - t0) / 5
    return { plainStepMs: plain, stateRootMs: hash, tracedStepMs: traced, kernels: n - 1, maxRssMiB: process.resourceUsage().maxRSS / 1024 }
  }
  const out = mkdtempSync(join(tmpdir(), 'ps-bench-'))
  try {
    const c0 = process.cpuUsage()
    const r = await trainTask({ program, outDir: out, dataset: ds, backend: cfg.backend, verifiable: cfg.mode !== 'plain', hashWorker: cfg.mode !== 'inline', evaluate: false })
    const cpu = process.cpuUsage(c0)
    // CPU time (all threads) per step is less sensitive to a busy machine than wall time
    const cpuMs = (cpu.user + cpu.system) / 1000
    return { samplesPerSec: r.samplesPerSec, seconds: r.seconds, cpuMsPerStep: cpuMs / cfg.steps, maxRssMiB: process.resourceUsage().maxRSS / 1024 }
  } finally { rmSync(out, { recursive: true, force: true }) }
}

if (process.argv[2] === '--child') {
  const r = await child(JSON.parse(process.argv[3]))
  process.stdout.write(JSON.stringify(r) + '\n')
  process.exit(0)
}

const steps = Number(process.argv[2] ?? 300)
const configs = [
  { name: 'wasm mlp b64 plain', backend: 'wasm', model: 'mlp', batch: 64, mode: 'plain' },
  { name: 'wasm mlp b64 verifiable (worker)', backend: 'wasm', model: 'mlp', batch: 64, mode: 'verifiable' },
  { name: 'wasm mlp b64 verifiable (inline)', backend: 'wasm', model: 'mlp', batch: 64, mode: 'inline' },
  { name: 'wasm mlp b128 plain', backend: 'wasm', model: 'mlp', batch: 128, mode: 'plain' },
  { name: 'wasm mlp b128 verifiable (worker)', backend: 'wasm', model: 'mlp', batch: 128, mode: 'verifiable' },
  { name: 'cpu mlp b64 plain', backend: 'cpu', model: 'mlp', batch: 64, mode: 'plain', steps: Math.ceil(steps / 4) },
  { name: 'cpu mlp b64 verifiable (worker)', backend: 'cpu', model: 'mlp', batch: 64, mode: 'verifiable', steps: Math.ceil(steps / 4) },
  { name: 'wasm mlp b64 op trace', backend: 'wasm', model: 'mlp', batch: 64, mode: 'trace' },
  { name: 'wasm cnn b64 plain', backend: 'wasm', model: 'cnn', batch: 64, mode: 'plain', steps: Math.ceil(steps / 10) },
  { name: 'wasm cnn b64 verifiable (worker)', backend: 'wasm', model: 'cnn', batch: 64, mode: 'verifiable', steps: Math.ceil(steps / 10) }
]
const results = []
console.log(`load average before: ${(await import('node:os')).loadavg().map(x => x.toFixed(1)).join(' ')}`)
for (const c of configs) {
  const cfg = { steps, ...c }
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(cfg)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const r = JSON.parse(out.trim().split('\n').pop())
  results.push({ ...cfg, ...r })
  const fmt = r.samplesPerSec !== undefined ? `${Math.round(r.samplesPerSec)} samples/s, CPU ${r.cpuMsPerStep.toFixed(1)} ms/step` : `step ${r.plainStepMs.toFixed(1)} ms, state root ${r.stateRootMs.toFixed(1)} ms, traced step ${r.tracedStepMs.toFixed(0)} ms (${r.kernels} kernels)`
  console.log(`${c.name.padEnd(36)} ${fmt.padEnd(60)} peak RSS ${Math.round(r.maxRssMiB)} MiB`)
}
console.log(JSON.stringify(results))
