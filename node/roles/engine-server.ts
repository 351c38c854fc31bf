#!/usr/bin/env node
import '../polyfill.js'
import { initBackend } from '../train/backend.js'
import { cachedDatasetFor } from '../train/dataset-cache.js'
import { readProgram } from '../train/store.js'
import { CheckpointUnusable, replaySteps } from '../train/replay-many.js'
import { checkDivergence } from '../train/diverged-check.js'

// A long-lived engine process for a verifying peer (node/roles/warm-engine.ts
// starts it over IPC). A `proofswarm replay` child per task paid ~0.7 s of
// start-up (module load, wasm compile, dataset read and hash) for ~1 s of
// replay; here the backend and the dataset stay loaded between tasks. Jobs run
// one at a time, in arrival order. The process exits when its parent goes away
// or after an idle period, giving its memory back.
//
// Requests:  { id, cmd: 'warm', taskFile, datasetDir? }           → { id, ok, result: { backend, datasetRows } }
//            { id, cmd: 'replay', runDir, steps, datasetDir?, checkpointLayout? } → { id, ok, result: { results } | { unavailable: { step, reason } } }
//            { id, cmd: 'divergence', runDir, datasetDir?, checkpointLayout? } → { id, ok, result: { check } | { unavailable: { step, reason } } }
// Failures:  { id, ok: false, error }

interface Request { id: number, cmd: 'warm' | 'replay' | 'divergence', taskFile?: string, runDir?: string, steps?: number[], datasetDir?: string, checkpointLayout?: 'manifest' | 'program' }

const IDLE_MS = Number(process.env.PROOFSWARM_ENGINE_IDLE_MS ?? 300_000)
let idle: NodeJS.Timeout | undefined
let queue: Promise<void> = Promise.resolve()

function armIdle (): void {
  if (idle !== undefined) clearTimeout(idle)
  idle = setTimeout(() => process.exit(0), IDLE_MS)
}

async function handle (r: Request): Promise<unknown> {
  if (r.cmd === 'warm') {
    if (typeof r.taskFile !== 'string') throw new Error('warm needs taskFile')
    const program = readProgram(r.taskFile)
    const backend = await initBackend('auto', program.runtime)
    if (backend.runtime !== program.runtime) throw new Error(`this engine runs ${backend.runtime}, the task needs ${program.runtime}`)
    const ds = cachedDatasetFor(program.dataset, r.datasetDir)
    return { backend: backend.name, datasetRows: ds.trainSize }
  }
  if (r.cmd === 'replay') {
    if (typeof r.runDir !== 'string' || !Array.isArray(r.steps) || !r.steps.every(s => Number.isInteger(s))) throw new Error('replay needs runDir and integer steps')
    try {
      if (r.checkpointLayout !== undefined && r.checkpointLayout !== 'manifest' && r.checkpointLayout !== 'program') throw new Error(`unknown checkpoint layout ${String(r.checkpointLayout)}`)
      return { results: await replaySteps({ proofDir: r.runDir, steps: r.steps, datasetDir: r.datasetDir, checkpointLayout: r.checkpointLayout }) }
    } catch (e) {
      if (e instanceof CheckpointUnusable) return { unavailable: { step: e.step, reason: e.reason } }
      throw e
    }
  }
  if (r.cmd === 'divergence') {
    if (typeof r.runDir !== 'string') throw new Error('divergence needs runDir')
    try {
      return { check: await checkDivergence({ proofDir: r.runDir, datasetDir: r.datasetDir, checkpointLayout: r.checkpointLayout }) }
    } catch (e) {
      if (e instanceof CheckpointUnusable) return { unavailable: { step: e.step, reason: e.reason } }
      throw e
    }
  }
  throw new Error(`unknown engine command ${String((r as { cmd?: unknown }).cmd)}`)
}

if (process.send === undefined) {
  process.stderr.write('engine-server runs as a child of a peer (with an IPC channel)\n')
  process.exit(1)
}
process.on('disconnect', () => process.exit(0))
process.on('message', (m: Request) => {
  armIdle()
  queue = queue.then(async () => {
    if (idle !== undefined) clearTimeout(idle)
    try {
      process.send?.({ id: m.id, ok: true, result: await handle(m) })
    } catch (e) {
      process.send?.({ id: m.id, ok: false, error: (e as Error).message })
    }
    armIdle()
  })
})
armIdle()
process.send({ ready: true })
