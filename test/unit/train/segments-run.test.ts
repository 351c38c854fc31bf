import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { toHex } from '../../../protocols/commit/merkle.js'
import { firstNaNOf } from '../../../protocols/dispute/nan.js'
import { validateProof, rootAtStep } from '../../../protocols/pol/proof.js'
import { committedSteps } from '../../../protocols/pol/segments.js'
import { newProgram, programHash, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { trainTask } from '../../../node/train/run.js'
import { StateHasher } from '../../../node/train/state-hasher.js'
import { listCheckpoints, readProof, readRoots } from '../../../node/train/store.js'
import { tapeStep } from '../../../node/train/tape-recorder.js'
import { Trainer } from '../../../node/train/trainer.js'

// A verifiable run of a program with state roots every m > 1 steps: only the
// committed states (0, m, 2m, …, N) are hashed and written, and they are the
// very states the trainer goes through (the roots are computed here step by
// step by the Trainer itself, independently of the recorder).

let ds: Dataset
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'ps-seg-run-')); dirs.push(d); return d }
const prog = (rootEvery: number, o: { steps?: number, checkpointEvery?: number, learningRate?: number } = {}): TaskProgram => newProgram({
  model: 'mlp', dataset: datasetRef(ds), steps: o.steps ?? 10, optimizer: 'adam', batchSize: 16, checkpointEvery: o.checkpointEvery ?? 8, seed: 5, rootEvery, learningRate: o.learningRate
})

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(3, 256, 32)
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

/** Every state's root, 0 … n, from the Trainer alone. */
async function everyRoot (p: TaskProgram, n: number): Promise<string[]> {
  const t = await Trainer.create(p, ds)
  try {
    const out = [toHex(t.stateRoot())]
    for (let i = 0; i < n; i++) { t.runStep(); out.push(toHex(t.stateRoot())) }
    return out
  } finally { t.dispose() }
}

describe('trainTask with state roots every m steps', () => {
  it('m = 4 over 10 steps: hashes only states 0, 4, 8, 10, which are the trainer\'s states; checkpoints at committed steps', async () => {
    const p = prog(4)
    const all = await everyRoot(p, 10)
    const spy = vi.spyOn(StateHasher.prototype, 'submit')
    const dir = tmp()
    let r: Awaited<ReturnType<typeof trainTask>>
    let hashed: number[]
    try {
      r = await trainTask({ program: p, outDir: dir, dataset: ds, hashWorker: false, evaluate: false })
      hashed = spy.mock.calls.map(c => c[0].step)
    } finally { spy.mockRestore() }
    // the point of m: the states between committed steps are neither copied nor hashed
    expect(hashed).toEqual([0, 4, 8, 10])
    const proof = readProof(dir)
    expect(proof.rootEvery).toBe(4)
    expect(proof.steps).toBe(10)
    expect(proof.stateRoots).toEqual([all[0], all[4], all[8], all[10]])
    expect(rootAtStep(proof, 10)).toBe(all[10])
    expect(r.proofRoot).toBe(proof.proofRoot)
    expect(r.finalStateRoot).toBe(all[10])
    expect(proof.checkpoints.map(c => c.step)).toEqual([0, 8, 10])
    expect(listCheckpoints(dir)).toEqual([0, 8, 10])
    // state-roots.bin by leaf
    expect(readRoots(dir).map(toHex)).toEqual(proof.stateRoots)
    // the program names m: another program hash than the same program without it
    expect(proof.programHash).toBe(programHash(p))
    expect(proof.programHash).not.toBe(programHash(prog(1)))
    expect(() => validateProof(JSON.parse(readFileSync(join(dir, 'proof.json'), 'utf8')))).not.toThrow()
  })

  it('a run stopped and resumed by leaf gives the same proof as one run', async () => {
    const p = prog(2, { steps: 11, checkpointEvery: 4 })
    const whole = tmp()
    await trainTask({ program: p, outDir: whole, dataset: ds, hashWorker: false, evaluate: false })
    const split = tmp()
    const first = await trainTask({ program: p, outDir: split, dataset: ds, hashWorker: false, evaluate: false, until: 7 })
    expect(first.completed).toBe(false)
    // roots of 0, 2, 4, 6 were recorded; the file holds those up to the last checkpoint (4): leaves 0 … 2
    expect(readRoots(split).length).toBe(3)
    const second = await trainTask({ program: p, outDir: split, dataset: ds, hashWorker: false, evaluate: false, resume: true })
    expect(second.resumedFrom).toBe(4)
    expect(readFileSync(join(split, 'proof.json'), 'utf8')).toBe(readFileSync(join(whole, 'proof.json'), 'utf8'))
    expect(readRoots(split).map(toHex)).toEqual(readProof(whole).stateRoots)
    const all = await everyRoot(p, 11)
    expect(readProof(whole).stateRoots).toEqual(committedSteps(11, 2).map(s => all[s]))
  })

  it('a diverged run commits its last NaN-free state as the last leaf even when m does not divide it', async () => {
    // find where this program first produces a NaN, step by step under the tape recorder
    const p = prog(3, { steps: 9, checkpointEvery: 3, learningRate: 1e30 })
    const t = await Trainer.create(p, ds)
    const roots = [toHex(t.stateRoot())]
    let k: number | undefined
    try {
      while (t.step < p.steps && k === undefined) {
        const tr = tapeStep(t)
        if (firstNaNOf(tr.values.map(v => v.outputs)) !== undefined) k = tr.step
        else roots.push(tr.stateRootAfter)
      }
    } finally { t.dispose() }
    expect(k).toBeDefined()
    const dir = tmp()
    // a fault-free run that diverges at k; fakeDivergence makes it k = 4 when the real NaN comes later
    const fake = k! % 3 === 0 ? Math.min(5, p.steps) : undefined
    const r = await trainTask({ program: p, outDir: dir, dataset: ds, hashWorker: false, evaluate: false, fakeDivergence: fake })
    const last = fake !== undefined ? fake - 1 : k!
    expect(last % 3).not.toBe(0)
    expect(r.divergence?.step).toBe(last)
    const proof = readProof(dir)
    expect(proof.steps).toBe(last)
    expect(proof.stateRoots).toEqual(committedSteps(last, 3).map(s => roots[s]))
    expect(proof.checkpoints.map(c => c.step)).toContain(last)
    expect(readRoots(dir).map(toHex)).toEqual(proof.stateRoots)
  })
})
