import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { proofRootOf, type ProofOfLearning } from '../../../protocols/pol/proof.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { CheckpointUnusable, replayStep, replaySteps } from '../../../node/train/replay-many.js'
import { trainTask } from '../../../node/train/run.js'
import { checkpointDir } from '../../../node/train/store.js'

// A verifier's replay at m > 1: a sampled unit is a segment j, replayed from
// the checkpoint before c_j to c_{j+1}; the committed roots at c_j and c_{j+1}
// are compared and a mismatch is reported at the committed step whose root
// differs (which step inside the segment is the dispute's to find).

let ds: Dataset
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'ps-seg-replay-')); dirs.push(d); return d }
// 10 steps, roots every 4 (leaves 0, 4, 8, 10), checkpoints 0, 8, 10
const prog = (): TaskProgram => newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 10, optimizer: 'adam', batchSize: 16, checkpointEvery: 8, seed: 5, rootEvery: 4 })
let honest: string
let faulty: string

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(3, 256, 32)
  honest = tmp()
  await trainTask({ program: prog(), outDir: honest, dataset: ds, hashWorker: false, evaluate: false })
  // a solver whose step 6 (inside segment 1: steps 5 … 8) computes a wrong op; it carries on honestly from there
  faulty = tmp()
  await trainTask({ program: prog(), outDir: faulty, dataset: ds, hashWorker: false, evaluate: false, faults: { ops: [{ kernel: 'BatchMatMul', step: 6 }], weights: [] } })
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

const copy = (from: string): string => { const d = tmp(); cpSync(from, d, { recursive: true }); return d }
const proofOf = (d: string): ProofOfLearning => JSON.parse(readFileSync(join(d, 'proof.json'), 'utf8')) as ProofOfLearning
/** A run dir whose proof commits `root` at leaf `leaf` instead (the proof root recomputed: a consistent proof). */
function withLeaf (from: string, leaf: number, root: string): string {
  const d = copy(from)
  const p = proofOf(d)
  p.stateRoots[leaf] = root
  p.proofRoot = proofRootOf(p.stateRoots)
  p.finalStateRoot = p.stateRoots[p.stateRoots.length - 1]
  writeFileSync(join(d, 'proof.json'), JSON.stringify(p, null, 1) + '\n')
  return d
}

describe('replay by segment (roots every 4 steps)', () => {
  it('an honest run: every step names its segment, each replayed once, compared at its committed end', async () => {
    const r = await replaySteps({ proofDir: honest, steps: [1, 2, 3, 4, 5, 9, 10] })
    expect(r.map(x => [x.segment, x.step, x.fromCheckpoint, x.match, x.firstMismatch])).toEqual([
      [0, 4, 0, true, undefined], [1, 8, 0, true, undefined], [2, 10, 8, true, undefined]
    ])
    expect(r[2].expected).toBe(proofOf(honest).stateRoots[3])
    const one = await replayStep({ proofDir: honest, step: 7 })
    expect(one).toMatchObject({ segment: 1, step: 8, match: true, fromCheckpoint: 0 })
  })

  it('a wrong step inside a segment spoils the segment\'s end: reported at committed step 8, not at 6', async () => {
    const r = await replaySteps({ proofDir: faulty, steps: [2, 6] })
    expect(r.map(x => [x.segment, x.step, x.match, x.firstMismatch])).toEqual([[0, 4, true, undefined], [1, 8, false, 8]])
    // the segment after it starts from the solver's (wrong but committed) checkpoint 8 and replays
    expect((await replaySteps({ proofDir: faulty, steps: [10] }))[0]).toMatchObject({ segment: 2, match: true })
  })

  it('a wrong committed root at c_j: the next segment replays from the checkpoint and finds it at c_j', async () => {
    const d = withLeaf(honest, 1, proofOf(honest).stateRoots[2])
    // segment 1 (4 → 8) starts at the wrong root of step 4: located there, the end itself matches
    const [r] = await replaySteps({ proofDir: d, steps: [8] })
    expect(r).toMatchObject({ segment: 1, step: 8, match: true, firstMismatch: 4 })
  })

  it('a checkpoint that is not the committed state is CheckpointUnusable, not a wrong segment', async () => {
    const d = copy(honest)
    const f = join(checkpointDir(d, 8), 'state.bin')
    const b = readFileSync(f)
    b[0] ^= 1
    writeFileSync(f, b)
    await expect(replaySteps({ proofDir: d, steps: [10], checkpointLayout: 'program' })).rejects.toBeInstanceOf(CheckpointUnusable)
  })
})
