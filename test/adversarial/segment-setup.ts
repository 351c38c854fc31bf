import { Keyring } from '@polkadot/keyring'
import { sr25519Verify } from '@polkadot/util-crypto'
import { fromHex, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { commitTensor, proveSlice, type TensorData } from '../../protocols/commit/tensor.js'
import { stateLeaves } from '../../protocols/commit/state.js'
import { batchIndices } from '../../protocols/data/order.js'
import {
  ChallengerGame, ClaimRejected, DefenderGame, SegmentChallenger, SegmentDefender, datasetRootOf, judgeClaim, skeletonRootOf, verifySigned,
  type ChallengerInit, type ChallengerSegment, type Claim, type DisputeContext, type JudgeEnv, type Ruling, type Signed
} from '../../protocols/dispute/index.js'
import { committedSteps, segmentLength, committedStep } from '../../protocols/pol/segments.js'
import * as reference from '../../protocols/reference/index.js'
import type { Run, Side } from '../unit/dispute/fixture.js'

// The segment game (docs/disputes.md "Segments") played by the pure players
// over real op tapes of an MLP run, and judged by the chain's rule
// (judgeClaim with the task's root spacing m). Bob defends, Dave challenges.

const kr = new Keyring({ type: 'sr25519' })
export const bob = kr.addFromUri('//Bob')
export const dave = kr.addFromUri('//Dave')
export const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }
export const GENESIS = new Uint8Array(32).fill(0x22)
export const CTX: DisputeContext = { genesis: GENESIS, taskId: 0, disputeId: 0, segmented: true }

/** The committed leaves of a side's per-step roots at spacing m. */
export const leavesOf = (roots: string[], steps: number, m: number): string[] => committedSteps(steps, m).map(s => roots[s])

export function segEnv (run: Run, defenderRoots: string[], m: number, j: number, caller: 'challenger' | 'defender', ctx = CTX): JudgeEnv {
  return {
    ...ctx,
    step: -1,
    challenger: dave.publicKey,
    defender: bob.publicKey,
    caller,
    programHash: sha256(run.programBytes),
    datasetRoot: datasetRootOf(commitTensor(run.x).root, commitTensor(run.y).root),
    skeletonRoot: skeletonRootOf(run.skeleton),
    proofRoot: merkleRoot(leavesOf(defenderRoots, run.program.steps, m).map(fromHex)),
    stepCount: run.program.steps,
    segment: { j, rootEvery: m },
    reference,
    verify
  }
}

/** The ruling, or the reason the chain refuses the claim. */
export function judge (e: JudgeEnv, c: Claim): Ruling | string {
  try { return judgeClaim(e, c) } catch (x) { if (x instanceof ClaimRejected) return x.reason; throw x }
}

export function segmentDefender (run: Run, d: Side, m: number, j: number, o: { inside?: Uint8Array[], ctx?: DisputeContext } = {}): SegmentDefender {
  const steps = run.program.steps
  const first = committedStep(j, steps, m)
  const L = segmentLength(j, steps, m)
  return new SegmentDefender({
    ...(o.ctx ?? CTX), account: bob.publicKey, sign: x => bob.sign(x), j, rootEvery: m, steps, stateRoots: leavesOf(d.roots, steps, m),
    inside: o.inside ?? d.roots.slice(first + 1, first + L).map(fromHex), program: run.programBytes
  })
}

export function segmentChallenger (run: Run, d: Side, own: string[], m: number, j: number, ctx = CTX, nanAt?: number): SegmentChallenger {
  const steps = run.program.steps
  const first = committedStep(j, steps, m)
  const L = segmentLength(j, steps, m)
  return new SegmentChallenger({
    ...ctx, account: dave.publicKey, sign: x => dave.sign(x), j, rootEvery: m, steps, stateRoots: leavesOf(d.roots, steps, m),
    defender: bob.publicKey, own: own.slice(first, first + L + 1).map(fromHex), ...(nanAt !== undefined ? { nanAt } : {})
  })
}

const tensorOf = (s: Side) => (e: number, io: 'in' | 'out', k: number): TensorData => io === 'in' ? s.values[e].inputs[k] : s.values[e].outputs[k]

/** The one-step players after the opening of `run.step` in segment j: the defender commits as message 2, the challenger continues from its opening. */
export function stepGames (
  run: Run, d: Side, c: Side, opening: Signed, segment: ChallengerSegment, ctx = CTX, nan: Pick<ChallengerInit, 'firstNan' | 'stateNan'> = {}
): { D: DefenderGame, C: ChallengerGame } {
  const base = { ...ctx, step: run.step }
  const D = new DefenderGame({
    ...base, entries: d.entries, tensor: tensorOf(d), account: bob.publicKey, sign: x => bob.sign(x), stateRoots: d.roots, program: run.programBytes, opening
  })
  const C = new ChallengerGame({
    ...base, entries: c.entries, tensor: tensorOf(c), account: dave.publicKey, sign: x => dave.sign(x), defender: bob.publicKey,
    stateRoots: d.roots, preStateLeaves: stateLeaves(run.before, run.step), postRoot: fromHex(c.roots[run.step + 1]),
    program: run.programBytes, skeleton: run.skeleton,
    dataset: { xRoot: commitTensor(run.x).root, yRoot: commitTensor(run.y).root, row: (name, i) => proveSlice(name === 'x' ? run.x : run.y, 'row', i) },
    segment,
    ...nan
  })
  const rows = batchIndices(run.program.seed, run.ds.trainSize, run.program.batchSize, run.step)
  C.batchRow = r => rows[r]
  C.operandRefs = (e, flat) => reference.elementOperands(run.program.runtime, reference.opShapeOf(e), flat)
  return { D, C }
}

/**
 * Plays segment j to its claim off chain: segment, opening, then the step
 * game at the opened step (which must be `run.step`, whose tapes the sides hold).
 */
export function playSegment (
  run: Run, d: Side, c: Side, m: number, j: number,
  o: { inside?: Uint8Array[], ctx?: DisputeContext, nanAt?: number, nan?: Pick<ChallengerInit, 'firstNan' | 'stateNan'> } = {}
): { claim: Claim, by: 'challenger' | 'defender', step: number, msgs: Signed[] } {
  const CTX = o.ctx ?? CTX0
  const SD = segmentDefender(run, d, m, j, o)
  const SC = segmentChallenger(run, d, c.roots, m, j, CTX, o.nanAt)
  const seg = SD.segment()
  const msgs: Signed[] = [seg]
  const opened = SC.onSegment(verifySigned(seg, bob.publicKey, verify, CTX), seg)
  if ('fail' in opened) throw new Error(opened.fail)
  msgs.push(opened.send)
  const r = SD.onOpen(verifySigned(opened.send, dave.publicKey, verify, CTX), opened.send)
  if ('claim' in r) return { claim: r.claim, by: 'defender', step: opened.step, msgs }
  if ('ignore' in r) throw new Error(r.ignore)
  if (r.step !== run.step) throw new Error(`opened step ${r.step}, the run's tape is of step ${run.step}`)
  const { D, C } = stepGames(run, d, c, r.opening, opened.segment, CTX, o.nan)
  let dm = D.commit()
  msgs.push(dm)
  for (let round = 0; round < 200; round++) {
    const next = C.onMessage(verifySigned(dm, bob.publicKey, verify, CTX), dm)
    if ('claim' in next) return { claim: next.claim, by: 'challenger', step: r.step, msgs }
    if ('fail' in next) throw new Error(next.fail)
    if ('demand' in next) throw new Error(`the challenger demands ${next.demand}`)
    msgs.push(next.send)
    const a = D.respond(verifySigned(next.send, dave.publicKey, verify, CTX), next.send)
    if (a.claim !== undefined) return { claim: a.claim, by: 'defender', step: r.step, msgs }
    dm = a.reply!
    msgs.push(dm)
  }
  throw new Error('no claim in 200 rounds')
}

const CTX0 = CTX
export { toHex }
