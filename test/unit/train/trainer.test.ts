import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stateRoot, toHex } from '../../../protocols/commit/index.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { trainTask } from '../../../node/train/run.js'
import { replayStep } from '../../../node/train/replay-many.js'
import { listCheckpoints, readRoots } from '../../../node/train/store.js'

let ds: Dataset
const dirs: string[] = []
const prog = (opt: 'sgd' | 'adam', steps = 6): TaskProgram => newProgram({ model: 'mlp', dataset: datasetRef(ds), steps, optimizer: opt, batchSize: 32, checkpointEvery: 3, seed: 11 })

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(2, 256, 64)
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

async function roots (p: TaskProgram, n: number): Promise<string[]> {
  const t = await Trainer.create(p, ds)
  const out = [toHex(t.stateRoot())]
  for (let i = 0; i < n; i++) { t.runStep(); out.push(toHex(t.stateRoot())) }
  t.dispose()
  return out
}

describe('deterministic trainer (wasm)', () => {
  it('same program → same per-step roots; the trainer root equals protocols/commit stateRoot', async () => {
    for (const opt of ['sgd', 'adam'] as const) {
      const a = await roots(prog(opt), 4); const b = await roots(prog(opt), 4)
      expect(a).toEqual(b)
      expect(new Set(a).size).toBe(5)
    }
    const t = await Trainer.create(prog('adam'), ds)
    t.runStep()
    expect(toHex(t.stateRoot())).toBe(toHex(stateRoot(t.stateTensors(), 1)))
    expect(t.stateNames().slice(-2)).toEqual(['adam/accBeta1', 'adam/accBeta2'])
    expect(t.stateTensors().at(-2)?.values[0]).toBe(Math.fround(Math.fround(0.9) * Math.fround(0.9)))
    t.dispose()
  })

  it('stateCopies reads the wasm heap directly, into reused buffers', async () => {
    const t = await Trainer.create(prog('adam'), ds)
    t.runStep()
    const a = t.stateCopies()
    expect(a.map(x => Array.from(x.values))).toEqual(t.stateTensors().map(x => Array.from(x.values)))
    t.runStep()
    const bufs = a.map(x => x.values as Float32Array)
    const b = t.stateCopies(bufs)
    expect(b[0].values).toBe(bufs[0])
    expect(toHex(stateRoot(b, 2))).toBe(toHex(t.stateRoot()))
    t.dispose()
  })

  it('flipping one weight bit changes the root; restoring the state continues bit for bit', async () => {
    const p = prog('adam')
    const ref = await roots(p, 4)
    const t = await Trainer.create(p, ds)
    t.runStep(); t.runStep()
    const saved = t.stateTensors().map(x => ({ ...x, values: x.values.slice() }))
    const flipped = saved.map(x => ({ ...x, values: x.values.slice() }))
    new Uint32Array(flipped[0].values.buffer)[123] ^= 1
    expect(toHex(stateRoot(flipped, 2))).not.toBe(ref[2])
    t.dispose()
    const u = await Trainer.create(p, ds)
    u.loadState(saved, 2)
    expect(toHex(u.stateRoot())).toBe(ref[2])
    u.runStep(); u.runStep()
    expect(toHex(u.stateRoot())).toBe(ref[4])
    u.dispose()
  })

  it('trainTask writes a proof whose roots match, resume gives the same proof root, replay matches', async () => {
    const p = prog('sgd', 7)
    const a = mkdtempSync(join(tmpdir(), 'ps-tr-a-')); const b = mkdtempSync(join(tmpdir(), 'ps-tr-b-')); dirs.push(a, b)
    const full = await trainTask({ program: p, outDir: a, dataset: ds })
    expect(full.proofWritten).toBe(true)
    expect(full.checkpoints.map(c => c.step)).toEqual([0, 3, 6, 7])
    const ref = await roots(p, 7)
    expect(full.finalStateRoot).toBe(ref[7])
    const part = await trainTask({ program: p, outDir: b, dataset: ds, until: 4 })
    expect(part.proofWritten).toBe(false)
    const rest = await trainTask({ program: p, outDir: b, dataset: ds, resume: true })
    expect(rest.resumedFrom).toBe(3)
    expect(rest.proofRoot).toBe(full.proofRoot)
    const r = await replayStep({ proofDir: a, step: 5 })
    expect(r).toMatchObject({ step: 5, fromCheckpoint: 3, match: true })
    // a fresh run of another program in the same directory replaces the old artefacts
    const other = await trainTask({ program: prog('adam', 4), outDir: a, dataset: ds, evaluate: false })
    expect(other.checkpoints.map(c => c.step)).toEqual([0, 3, 4])
    expect(listCheckpoints(a)).toEqual([0, 3, 4])
    await expect(trainTask({ program: p, outDir: a, dataset: ds, resume: true })).rejects.toThrow(/different task/)
  })

  it('state-roots.bin is written as the run goes; a crash before the last checkpoint\'s roots were recorded resumes from the one before', async () => {
    const p = prog('adam', 9)
    const a = mkdtempSync(join(tmpdir(), 'ps-tr-c-')); const b = mkdtempSync(join(tmpdir(), 'ps-tr-d-')); dirs.push(a, b)
    const full = await trainTask({ program: p, outDir: a, dataset: ds, evaluate: false })
    const ref = await roots(p, 9)
    // one root per state 0 … 9, each at its offset
    expect(readRoots(a).map(toHex)).toEqual(ref)
    await trainTask({ program: p, outDir: b, dataset: ds, until: 7, evaluate: false })
    expect(readRoots(b).length).toBe(7) // roots 0 … 6: up to checkpoint 6
    // a crash after checkpoint 6's files were written but before its roots: the file holds roots 0 … 3
    writeFileSync(join(b, 'state-roots.bin'), readFileSync(join(b, 'state-roots.bin')).subarray(0, 4 * 32 + 5))
    const warnings: string[] = []
    const rest = await trainTask({
      program: p, outDir: b, dataset: ds, resume: true, evaluate: false, log: { info: () => {}, warn: (m: string) => { warnings.push(m) } }
    })
    expect(rest.resumedFrom).toBe(3)
    expect(warnings.join('\n')).toMatch(/after 3 have no roots/)
    expect(rest.proofRoot).toBe(full.proofRoot)
    expect(readRoots(b).map(toHex)).toEqual(ref)
    // a checkpoint cut short by a crash (its roots recorded): the one before is used
    const c = mkdtempSync(join(tmpdir(), 'ps-tr-e-')); dirs.push(c)
    await trainTask({ program: p, outDir: c, dataset: ds, until: 7, evaluate: false })
    const six = join(c, 'checkpoints', 'step-00000006', 'state.bin')
    writeFileSync(six, readFileSync(six).subarray(0, 1000))
    const again = await trainTask({ program: p, outDir: c, dataset: ds, resume: true, evaluate: false })
    expect(again.resumedFrom).toBe(3)
    expect(again.proofRoot).toBe(full.proofRoot)
    // no usable root at all: a clear error, nothing trained
    writeFileSync(join(b, 'state-roots.bin'), new Uint8Array(3 * 32))
    await expect(trainTask({ program: p, outDir: b, dataset: ds, resume: true, evaluate: false })).rejects.toThrow(/does not agree with any checkpoint/)
  })
})
