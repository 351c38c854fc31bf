import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, toHex } from '../../../protocols/commit/merkle.js'
import { checkForcedExact } from '../../../protocols/dispute/forced-exact.js'
import { forcedErrorFromOutput } from '../../../protocols/dispute/forced-error.js'
import type { ProofOfLearning } from '../../../protocols/pol/proof.js'
import { newProgram } from '../../../protocols/program/index.js'
import { anyFault, parseNodeFaults, tapeFaults } from '../../../node/dispute/faults.js'
import { exactnessFromTape } from '../../../node/dispute/forced-exact.js'
import { segmentDisputeError, segmentPlanOf } from '../../../node/dispute/segment-challenge.js'
import { SegmentContradicted, SegmentRuns, type SegmentRunHost } from '../../../node/dispute/segment-defence.js'
import { readTapeFile } from '../../../node/engine/tape-file.js'
import { tapeForDispute } from '../../../node/engine/tape-job.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { segmentRoots } from '../../../node/train/segment-roots.js'
import { trainWithRootEvery } from '../../helpers/segment-run.js'

// The node's parts of a segment dispute (docs/disputes.md "Segments") on real
// runs with a root every m = 4 of 10 steps: the segment re-run, the
// challenger's rule for what it disputes, the defender's refusal to sign a
// segment its own proof contradicts, and a forced error at the end of a
// segment proven exact against its committed leaf.

const M = 4
const ds = syntheticDataset(9, 64, 8)
const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 10, optimizer: 'sgd', batchSize: 4, seed: 5, checkpointEvery: 4, rootEvery: M })
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'segment-node-')); dirs.push(d); return d }
const perStep = (dir: string): string[] => (JSON.parse(readFileSync(join(dir, 'proof.json'), 'utf8')) as ProofOfLearning).stateRoots
let run: { dir: string, m1: string, proof: ProofOfLearning }

beforeAll(async () => {
  await initBackend('wasm')
  const m1 = tmp(); const dir = tmp()
  run = { dir, m1, proof: await trainWithRootEvery(program, ds, m1, dir) }
}, 120_000)
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

describe('segment disputes on the node', () => {
  it('re-runs a segment from its checkpoint to every root inside it, the last segment shorter', async () => {
    const roots = perStep(run.m1)
    expect(run.proof.stateRoots).toEqual([roots[0], roots[4], roots[8], roots[10]])
    expect((await segmentRoots({ proofDir: run.dir, first: 4, length: 4 })).roots).toEqual(roots.slice(4, 9))
    const last = await segmentRoots({ proofDir: run.dir, first: 8, length: 2 })
    expect(last).toMatchObject({ roots: roots.slice(8, 11), fromCheckpoint: 8 })
    await expect(segmentRoots({ proofDir: run.dir, first: 8, length: 3 })).rejects.toThrow(/past the program's 10 steps/)
  }, 60_000)

  it('the challenger disputes a segment only from an agreed leaf j to a different leaf j + 1', () => {
    const roots = perStep(run.m1)
    const plan = segmentPlanOf(run.proof, 8)
    expect(plan).toEqual({ j: 1, first: 4, length: 4 })
    expect(segmentPlanOf(run.proof, 5)).toEqual(plan)
    expect(segmentPlanOf(run.proof, 9)).toEqual({ j: 2, first: 8, length: 2 })
    expect(() => segmentPlanOf(run.proof, 11)).toThrow(/outside/)
    const own = roots.slice(4, 9)
    expect(segmentDisputeError(plan, run.proof, own)).toMatch(/replays to the committed leaf 2: nothing to dispute/)
    const otherEnd = [...own.slice(0, 4), 'ab'.repeat(32)]
    expect(segmentDisputeError(plan, run.proof, otherEnd)).toBeUndefined()
    expect(segmentDisputeError(plan, run.proof, ['cd'.repeat(32), ...otherEnd.slice(1)])).toMatch(/differs from leaf 1 .* dispute an earlier segment/)
    expect(segmentDisputeError(plan, run.proof, own.slice(1))).toMatch(/4 roots, not 5/)
  })

  it('a defender never signs a segment its committed leaves contradict; with its training\'s faults it signs the roots it trained', async () => {
    const roots = perStep(run.m1)
    // the re-run through the engine job, here in process
    const host: SegmentRunHost = { segmentRoots: async (dir, first, length, faults) => (await segmentRoots({ proofDir: dir, first, length, faults })).roots }
    const runs = new SegmentRuns(host)
    expect((await runs.inside(0, run.dir, run.proof, 1, { ops: [], weights: [] })).map(toHex)).toEqual(roots.slice(5, 8))
    // a run trained with a weight fault after step 6, re-run without it: its leaf 2 is not what the re-run reaches
    const fm1 = tmp(); const fdir = tmp()
    const faulty = await trainWithRootEvery(program, ds, fm1, fdir, { ops: [], weights: [6] })
    await expect(runs.inside(1, fdir, faulty, 1, { ops: [], weights: [] })).rejects.toBeInstanceOf(SegmentContradicted)
    await expect(runs.inside(1, fdir, faulty, 1, { ops: [], weights: [] })).rejects.toThrow(/state 8 is not leaf 2/)
    // the node that trained it with that fault re-runs it with the fault and signs the roots it committed
    const inside = await new SegmentRuns(host).inside(1, fdir, faulty, 1, { ops: [], weights: [6] })
    expect(inside.map(toHex)).toEqual(perStep(fm1).slice(5, 8))
    expect(inside.map(toHex)[1]).not.toBe(roots[6])
  }, 60_000)

  it('a forced error ends a segment: the solver\'s exactness proof is checked against the committed leaf', async () => {
    // the draw at m = 4 names a segment's last transition; find a VRF output that orders one in segment 1
    let output = new Uint8Array(32); let f: number | null = null
    for (let i = 0; i < 10_000 && f !== 7; i++) {
      output = new Uint8Array(32); new DataView(output.buffer).setUint32(0, i)
      f = forcedErrorFromOutput(output, 10, 1_000_000, M)
    }
    expect(f).toBe(7) // c_2 − 1: the state after it is leaf 2
    const fm1 = tmp(); const fdir = tmp()
    const forced = await trainWithRootEvery(program, ds, fm1, fdir, { ops: [], weights: [f! + 1] })
    const out = join(fdir, 'tape.cbor')
    await tapeForDispute({ runDir: fdir, step: f! + 1, out, faults: { ops: [], weights: [f! + 1] } })
    const tape = readTapeFile(out)
    const ex = exactnessFromTape(tape, forced.stateRoots, { steps: 10, rootEvery: M })
    if (!('bytes' in ex)) throw new Error(ex.error)
    const env = { step: f!, proofRoot: merkleRoot(forced.stateRoots.map(fromHex)), stepCount: 10, rootEvery: M }
    expect(checkForcedExact({ ...env, honestPost: fromHex(perStep(run.m1)[8]) }, ex.bytes)).toEqual({ ok: true })
    // indexing the per-step way (leaf f + 1) proves nothing
    expect(exactnessFromTape(tape, forced.stateRoots)).toMatchObject({ error: expect.any(String) })
    // the honest run has no forced error at that leaf
    expect(exactnessFromTape(tape, run.proof.stateRoots, { steps: 10, rootEvery: M })).toMatchObject({ error: expect.stringMatching(/not the honest one/) })
  }, 60_000)

  it('the short-segment fault is a defender fault only (training and tapes are unchanged by it)', () => {
    const f = parseNodeFaults(['short-segment'])
    expect(f.shortSegment).toBe(true)
    expect(anyFault(f)).toBe(true)
    expect(tapeFaults(f, null)).toEqual({ ops: [], weights: [] })
  })
})
