import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toHex } from '../../../protocols/commit/merkle.js'
import { firstNaNOf } from '../../../protocols/dispute/nan.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { replayStep } from '../../../node/train/replay-many.js'
import { checkDivergence } from '../../../node/train/diverged-check.js'
import { committedSteps } from '../../../protocols/pol/segments.js'
import { trainTask } from '../../../node/train/run.js'
import { listCheckpoints, readProof } from '../../../node/train/store.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { Trainer } from '../../../node/train/trainer.js'

// A NaN ends a verifiable run: trainTask watches every op output, stops at
// the step that produced the first NaN, finds it under the tape recorder and writes
// a diverged proof (states 0..k, the divergence point), with a checkpoint of
// state k for verifiers to replay the diverged step from.

let ds: Dataset
const dirs: string[] = []
const prog = (learningRate: number): TaskProgram => newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 6, optimizer: 'sgd', learningRate, batchSize: 4, checkpointEvery: 3, seed: 11 })

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(7, 64, 8)
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

/** The first taped step holding a NaN, its divergence point and the roots of states 0..k, computed step by step under the tape recorder. */
async function reference (p: TaskProgram): Promise<{ k: number, entry: number, flat: number, roots: string[] } | undefined> {
  const t = await Trainer.create(p, ds)
  const roots = [toHex(t.stateRoot())]
  try {
    while (t.step < p.steps) {
      const tr = tapeStep(t)
      const f = firstNaNOf(tr.values.map(v => v.outputs))
      if (f !== undefined) return { k: tr.step, entry: f.entry, flat: f.flat, roots }
      roots.push(tr.stateRootAfter)
    }
    return undefined
  } finally { t.dispose() }
}

describe('a verifiable run that produces a NaN ends with a diverged proof', () => {
  it('at the first NaN op output, with states 0..k and a checkpoint of state k', async () => {
    const p = prog(1e30)
    const want = await reference(p)
    expect(want).toBeDefined()
    const dir = mkdtempSync(join(tmpdir(), 'ps-nan-')); dirs.push(dir)
    const r = await trainTask({ program: p, outDir: dir, dataset: ds, evaluate: false })
    expect(r.divergence).toEqual({ step: want!.k, entry: want!.entry, flat: want!.flat })
    expect(r.completed).toBe(false)
    expect(r.proofWritten).toBe(true)
    const proof = readProof(dir)
    expect(proof.steps).toBe(want!.k)
    expect(proof.stateRoots).toEqual(want!.roots)
    expect(proof.divergence).toEqual({ entry: want!.entry, flat: want!.flat })
    expect(listCheckpoints(dir)).toContain(want!.k)
    // a verifier replays the steps before k from the proof's checkpoints
    if (want!.k >= 1) expect(await replayStep({ proofDir: dir, step: want!.k })).toMatchObject({ match: true })
  })

  it('a solver that trains on through the NaN (fault) writes a complete proof; a replay of a committed step meets the NaN', async () => {
    const p = prog(1e30)
    const want = (await reference(p))!
    const dir = mkdtempSync(join(tmpdir(), 'ps-nan-')); dirs.push(dir)
    const r = await trainTask({ program: p, outDir: dir, dataset: ds, evaluate: false, haltOnNaN: false })
    expect(r.divergence).toBeUndefined()
    expect(r.completed).toBe(true)
    // the step that made the NaN, and a later one whose checkpoint holds NaNs
    const at = await replayStep({ proofDir: dir, step: want.k + 1 })
    expect(at).toMatchObject({ match: true, nanStep: want.k + 1 })
    const later = await replayStep({ proofDir: dir, step: p.steps })
    expect(later.match).toBe(true)
    expect(later.nanStep).toBeGreaterThan(want.k)
    expect(later.nanStep).toBeLessThanOrEqual(p.steps)
  })

  it('a run without NaNs is untouched by the watch: a complete proof', async () => {
    const p = prog(0.05)
    const dir = mkdtempSync(join(tmpdir(), 'ps-nan-')); dirs.push(dir)
    const r = await trainTask({ program: p, outDir: dir, dataset: ds, evaluate: false })
    expect(r.divergence).toBeUndefined()
    expect(r.completed).toBe(true)
    const t = await Trainer.create(p, ds)
    while (t.step < p.steps) t.runStep()
    expect(r.finalStateRoot).toBe(toHex(t.stateRoot()))
    t.dispose()
  })

  it('with a root every m steps the verifier checks the diverged step from the last leaf (state k = leaf ⌈k / m⌉)', async () => {
    // learning rate 3e9: the first NaN is in step 2, so states 0 and 2 are the leaves at m = 2
    const p = prog(3e9)
    const want = (await reference(p))!
    expect(want.k).toBe(2)
    // the same training with checkpoints and roots every 2 steps: the trainer commits states 0 and k only
    const p2 = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 6, optimizer: 'sgd', learningRate: 3e9, batchSize: 4, checkpointEvery: 2, rootEvery: 2, seed: 11 })
    const dir = mkdtempSync(join(tmpdir(), 'ps-nan-')); dirs.push(dir)
    const r = await trainTask({ program: p2, outDir: dir, dataset: ds, evaluate: false })
    expect(r.divergence).toBeDefined()
    const proof = readProof(dir, 2)
    expect(proof.rootEvery).toBe(2)
    expect(proof.steps).toBe(want.k)
    expect(proof.stateRoots).toEqual(committedSteps(want.k, 2).map(s => want.roots[s]))
    const c = await checkDivergence({ proofDir: dir })
    expect(c).toMatchObject({ ok: true, step: want.k + 1, found: { entry: want.entry, flat: want.flat, output: 0 } })
  })
})
