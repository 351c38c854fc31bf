import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chunkedStateRoot, commitChunked, commitTensor, sha256, stateRoot, toHex, valuesFromBytes, type TensorData } from '../../../protocols/commit/index.js'
import { CheckpointError, openCheckpoint, type CheckpointManifest } from '../../../protocols/pol/checkpoint.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { replaySteps } from '../../../node/train/replay-many.js'
import { trainTask } from '../../../node/train/run.js'
import { checkpointDir, listCheckpoints, readCheckpoint, readProof, readRoots } from '../../../node/train/store.js'
import { Trainer } from '../../../node/train/trainer.js'

// A program with `stateCommitment: 'chunked'` (docs/training.md "Chunked
// roots: design", step 5): the training loop commits chunked state roots, its
// checkpoints list chunked commitments, and they are the roots protocols/commit
// gives for the very states the trainer goes through and for the checkpoint's
// bytes. Without the field, the same training commits row + column roots as before.

let ds: Dataset
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'ps-chunked-run-')); dirs.push(d); return d }
const prog = (chunked: boolean, rootEvery = 1): TaskProgram => newProgram({
  model: 'mlp', dataset: datasetRef(ds), steps: 8, optimizer: 'adam', batchSize: 16, checkpointEvery: 4, seed: 5, rootEvery,
  ...(chunked ? { stateCommitment: 'chunked' as const } : {})
})

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(3, 256, 32)
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

/** Every state 0 … n of the program, from the Trainer alone. */
async function everyState (p: TaskProgram, n: number): Promise<TensorData[][]> {
  const t = await Trainer.create(p, ds)
  try {
    const copy = (): TensorData[] => t.stateTensors().map(x => ({ ...x, shape: [...x.shape], values: x.values.slice() }))
    const out = [copy()]
    while (t.step < n) { t.runStep(); out.push(copy()) }
    return out
  } finally { t.dispose() }
}

/** A checkpoint's state from its data file alone, laid out by its manifest. */
function stateOfFile (dir: string, step: number): { manifest: CheckpointManifest, tensors: TensorData[], data: Uint8Array } {
  const d = checkpointDir(dir, step)
  const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8')) as CheckpointManifest
  const data = new Uint8Array(readFileSync(join(d, 'state.bin')))
  const tensors = manifest.tensors.map(e => ({
    shape: e.shape, dtype: e.dtype, values: valuesFromBytes(e.dtype, data.slice(e.offset, e.offset + e.byteLength))
  }))
  return { manifest, tensors, data }
}

describe('chunked state roots in training', () => {
  it('the loop commits chunkedStateRoot of every state, and each checkpoint lists chunked commitments of its bytes', async () => {
    const p = prog(true)
    const out = tmp()
    const r = await trainTask({ program: p, outDir: out, dataset: ds, hashWorker: false, evaluate: false })
    expect(r.proofWritten).toBe(true)
    const states = await everyState(p, 8)
    const proof = readProof(out)
    expect(proof.stateRoots).toEqual(states.map((s, i) => toHex(chunkedStateRoot(s, i))))
    // not the row + column roots of the same states
    expect(proof.stateRoots[3]).not.toBe(toHex(stateRoot(states[3], 3)))
    expect(readRoots(out).map(toHex)).toEqual(proof.stateRoots)
    expect(listCheckpoints(out)).toEqual([0, 4, 8])
    for (const step of [0, 4, 8]) {
      const { manifest, tensors } = stateOfFile(out, step)
      expect(manifest.stateCommitment).toBe('chunked')
      expect(manifest.tensors.map(e => e.root)).toEqual(tensors.map(t => toHex(commitChunked(t).root)))
      expect(manifest.stateRoot).toBe(toHex(chunkedStateRoot(tensors, step)))
      expect(manifest.stateRoot).toBe(proof.stateRoots[step])
      // the program's scheme opens it; the row + column one does not
      expect(readCheckpoint(out, step, {}, { stateCommitment: 'chunked' }).manifest.stateRoot).toBe(manifest.stateRoot)
      expect(() => readCheckpoint(out, step)).toThrow(/under chunked, the program under rowcol/)
    }
    // the trainer's own root follows the program
    const t = await Trainer.create(p, ds)
    expect(toHex(t.stateRoot())).toBe(proof.stateRoots[0])
    t.dispose()
    // a verifier's replay of a step compares chunked roots, and matches
    const rs = await replaySteps({ proofDir: out, steps: [3, 8] })
    expect(rs.map(x => x.match)).toEqual([true, true])
    expect(rs[0].actual).toBe(proof.stateRoots[3])
  })

  it('roots every 2 steps: the committed states 0, 2, … under chunked commitments; resumed, the same proof', async () => {
    const p = prog(true, 2)
    const [whole, split] = [tmp(), tmp()]
    const a = await trainTask({ program: p, outDir: whole, dataset: ds, hashWorker: false, evaluate: false })
    const states = await everyState(p, 8)
    expect(readProof(whole).stateRoots).toEqual([0, 2, 4, 6, 8].map(s => toHex(chunkedStateRoot(states[s], s))))
    await trainTask({ program: p, outDir: split, dataset: ds, hashWorker: false, evaluate: false, until: 5 })
    const b = await trainTask({ program: p, outDir: split, dataset: ds, hashWorker: false, evaluate: false, resume: true })
    expect(b.resumedFrom).toBe(4)
    expect(b.proofRoot).toBe(a.proofRoot)
  })

  it('without the field nothing changes: row + column roots, manifests without stateCommitment', async () => {
    const p = prog(false)
    const out = tmp()
    await trainTask({ program: p, outDir: out, dataset: ds, hashWorker: false, evaluate: false })
    const states = await everyState(p, 8)
    expect(readProof(out).stateRoots).toEqual(states.map((s, i) => toHex(stateRoot(s, i))))
    const { manifest, tensors } = stateOfFile(out, 4)
    expect('stateCommitment' in manifest).toBe(false)
    expect(manifest.tensors.map(e => e.root)).toEqual(tensors.map(t => toHex(commitTensor(t).root)))
    expect(() => readCheckpoint(out, 4, {}, { stateCommitment: 'chunked' })).toThrow(/under rowcol, the program under chunked/)
  })
})

describe('openCheckpoint of a chunked checkpoint', () => {
  let out: string
  beforeAll(async () => {
    out = tmp()
    await trainTask({ program: prog(true), outDir: out, dataset: ds, hashWorker: false, evaluate: false })
  })

  it('refuses a changed chunk even when the data hash is made to fit', () => {
    const { manifest, data } = stateOfFile(out, 4)
    // one byte in the second chunk of the first tensor (a [784, n] weight: many chunks)
    const bad = data.slice()
    bad[4096 + 17] ^= 1
    const m = { ...manifest, dataSha256: toHex(sha256(bad)) }
    expect(() => openCheckpoint(m, bad, undefined, { stateCommitment: 'chunked' })).toThrow(/commitment mismatch/)
    expect(openCheckpoint(manifest, data, undefined, { stateCommitment: 'chunked' }).tensors.length).toBe(manifest.tensors.length)
  })

  it('refuses a manifest whose chunked commitment is not its bytes, or whose state root is not its commitments', () => {
    const { manifest, data } = stateOfFile(out, 4)
    // a row + column commitment in place of the chunked one, for the same bytes
    const t0 = stateOfFile(out, 4).tensors[0]
    const swapped = { ...manifest, tensors: manifest.tensors.map((e, i) => i === 0 ? { ...e, root: toHex(commitTensor(t0).root) } : e) }
    expect(() => openCheckpoint(swapped, data, undefined, { stateCommitment: 'chunked' })).toThrow(CheckpointError)
    // a manifest claiming the row + column root of the state (no stateCommitment field) for a chunked program
    const { stateCommitment: _c, ...asRowcol } = manifest
    expect(() => openCheckpoint(asRowcol, data, undefined, { stateCommitment: 'chunked' })).toThrow(/under rowcol, the program under chunked/)
    // another scheme name
    expect(() => openCheckpoint({ ...manifest, stateCommitment: 'chunky' as 'chunked' }, data, undefined, { stateCommitment: 'chunked' })).toThrow(/unknown scheme/)
    // a state root that is not the tree of its commitments
    const tensors = stateOfFile(out, 4).tensors
    expect(() => openCheckpoint({ ...manifest, stateRoot: toHex(stateRoot(tensors, 4)) }, data, undefined, { stateCommitment: 'chunked' })).toThrow(/state root mismatch/)
  })

  it('a verifier replaying from state.bin alone refuses a checkpoint with one changed chunk: its chunked root is not the committed one', async () => {
    const dir = tmp()
    for (const f of ['task.json', 'proof.json', 'state-roots.bin', 'run.json']) writeFileSync(join(dir, f), readFileSync(join(out, f)))
    for (const s of [0, 4, 8]) {
      const bytes = stateOfFile(out, s).data.slice()
      if (s === 4) bytes[4096 * 3 + 5] ^= 0x40
      mkdirSync(checkpointDir(dir, s), { recursive: true })
      writeFileSync(join(checkpointDir(dir, s), 'state.bin'), bytes)
    }
    // as a verifier does (it fetches only the data: node/train/replay-many.ts loadByProgram)
    await expect(replaySteps({ proofDir: dir, steps: [6], checkpointLayout: 'program' })).rejects.toThrow(/checkpoint 4 cannot be replayed from: its data does not hash to the proof's state root/)
    expect((await replaySteps({ proofDir: dir, steps: [3], checkpointLayout: 'program' }))[0].match).toBe(true)
  })
})
