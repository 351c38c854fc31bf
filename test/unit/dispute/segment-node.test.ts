import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, toHex } from '../../../protocols/commit/merkle.js'
import { checkForcedLeaf, forcedLeaf } from '../../../protocols/dispute/forced-leaf.js'
import { forcedErrorFromOutput, forcedErrorRoom } from '../../../protocols/dispute/forced-error.js'
import type { ProofOfLearning } from '../../../protocols/pol/proof.js'
import { newProgram } from '../../../protocols/program/index.js'
import { anyFault, parseNodeFaults, tapeFaults } from '../../../node/dispute/faults.js'
import { revealProofFromTape } from '../../../node/dispute/forced-reveal.js'
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
// segment's end leaf, with the reveal's proof of the mark.

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

  it('a forced error marks a segment\'s end leaf: training goes on honestly, the defender\'s re-runs stand, the reveal proves the mark', async () => {
    // the draw at m = 4, checkpoints every 4: the only committed leaf that is no checkpoint is none (4, 8 are checkpoints) —
    // so this program has no room, and one with checkpoints every 8 marks leaf 1 (state 4)
    expect(forcedErrorRoom(10, M, 4)).toBe(0)
    const p8 = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 10, optimizer: 'sgd', batchSize: 4, seed: 5, checkpointEvery: 8, rootEvery: M })
    const f = forcedErrorFromOutput(new Uint8Array(32), 10, 1_000_000, M, 8)
    expect(f).toBe(3) // c_1 − 1: the state after it is leaf 1
    const hm1 = tmp(); const hdir = tmp(); const fm1 = tmp(); const fdir = tmp()
    const honestProof = await trainWithRootEvery(p8, ds, hm1, hdir)
    const forced = await trainWithRootEvery(p8, ds, fm1, fdir, { ops: [], weights: [] }, f!)
    // only leaf 1 differs: it is the mark of the honest root, and every later leaf is the honest run's
    const marked = toHex(forcedLeaf(fromHex(honestProof.stateRoots[1])))
    expect(forced.stateRoots).toEqual(honestProof.stateRoots.map((r, i) => i === 1 ? marked : r))
    // the defender re-runs segments 0 (ending at the mark) and 1 (starting at it) and signs them
    const host: SegmentRunHost = { segmentRoots: async (dir, first, length, faults) => (await segmentRoots({ proofDir: dir, first, length, faults })).roots }
    expect((await new SegmentRuns(host).inside(0, fdir, forced, 0, { ops: [], weights: [] })).map(toHex)).toEqual(perStep(hm1).slice(1, 4))
    expect((await new SegmentRuns(host).inside(0, fdir, forced, 1, { ops: [], weights: [] })).map(toHex)).toEqual(perStep(hm1).slice(5, 8))
    // a challenger of segment 1 agrees with its marked start; of segment 0, disputes its end
    const own1 = perStep(hm1).slice(4, 9)
    expect(segmentDisputeError(segmentPlanOf(forced, 8), forced, own1)).toMatch(/replays to the committed leaf 2: nothing to dispute/)
    expect(segmentDisputeError(segmentPlanOf(forced, 4), forced, perStep(hm1).slice(0, 5))).toBeUndefined()
    const out = join(fdir, 'tape.cbor')
    await tapeForDispute({ runDir: fdir, step: f! + 1, out, faults: { ops: [], weights: [] } })
    const tape = readTapeFile(out)
    const ex = revealProofFromTape(tape, forced.stateRoots, { steps: 10, rootEvery: M })
    if (!('bytes' in ex)) throw new Error(ex.error)
    const env = { step: f!, proofRoot: merkleRoot(forced.stateRoots.map(fromHex)), stepCount: 10, rootEvery: M }
    expect(checkForcedLeaf({ ...env, honestPost: fromHex(perStep(hm1)[4]) }, ex.bytes)).toEqual({ ok: true })
    // indexing the per-step way (leaf f + 1) proves nothing
    expect(revealProofFromTape(tape, forced.stateRoots)).toMatchObject({ error: expect.any(String) })
    // the honest run has no forced error at that leaf
    expect(revealProofFromTape(tape, honestProof.stateRoots, { steps: 10, rootEvery: M })).toMatchObject({ error: expect.stringMatching(/not the forced mark/) })
  }, 120_000)

  it('the short-segment fault is a defender fault only (training and tapes are unchanged by it)', () => {
    const f = parseNodeFaults(['short-segment'])
    expect(f.shortSegment).toBe(true)
    expect(anyFault(f)).toBe(true)
    expect(tapeFaults(f)).toEqual({ ops: [], weights: [] })
  })
})
