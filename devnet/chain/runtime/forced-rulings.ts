import { hexToU8a, u8aToHex } from '@polkadot/util'
import type { Claim } from '../../../protocols/dispute/claim.js'
import { checkDrawReveal, checkForcedErrorReveal } from '../../../protocols/dispute/forced-error.js'
import { checkForcedLeaf, rulingBasis } from '../../../protocols/dispute/forced-leaf.js'
import type { ProofRuling, RulingClaimKind, RulingOutcome } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'
import { REVEAL_WINDOW } from './spec.js'
import { vrfVerify } from './vrf.js'

// Which SolverProof rulings a forced-error reveal may excuse (part of the
// Arbitration pallet; arbitration.ts). A forced error commits the marked leaf
// forcedLeaf(H) of the honest post-state H after an honest step, so the honest
// challenger's claim about it is a `state` claim, and the excuse needs a
// proof that the committed leaf is the mark of that claim's honest post-state
// (protocols/dispute/forced-leaf.ts). Every other ruling at the step stays a
// lost dispute.

const P = 'Arbitration'

export type { ProofRuling, RulingClaimKind, RulingOutcome }

/** What a ruling records of the claim it was decided on. */
export interface RulingBasis { claimKind: RulingClaimKind, honestPost: string | null }

const KINDS: Record<Claim['kind'], RulingClaimKind> = { skeleton: 'Skeleton', input: 'Input', state: 'State', element: 'Element', data: 'Data', lie: 'Lie', badOpen: 'BadOpen', init: 'Init', nan: 'Nan', convert: 'Convert' }

export function basisOf (claim: Claim, step: number): RulingBasis {
  const b = rulingBasis(claim, step)
  return { claimKind: KINDS[b.kind], honestPost: b.honestPost === null ? null : u8aToHex(b.honestPost) }
}

const excusable = (r: Pick<ProofRuling, 'claimKind' | 'honestPost'>): boolean => r.claimKind === 'State' && r.honestPost !== null

/**
 * A new ruling at `step`. After a reveal at that step it is a forced error at
 * once only if it was decided on the same honest post-state as a ruling the
 * reveal already excused; otherwise it awaits a reveal like any other.
 */
export function newRuling (
  ctx: Context, t: { rulings: ProofRuling[] }, disputeId: bigint, challenger: string, step: number, basis: RulingBasis
): ProofRuling {
  const excused = excusable(basis) &&
    t.rulings.some(r => r.step === step && r.outcome === 'ForcedError' && r.honestPost === basis.honestPost)
  return { disputeId, challenger, step, revealDeadline: ctx.now + REVEAL_WINDOW, outcome: excused ? 'ForcedError' : 'AwaitingReveal', ...basis }
}

/**
 * The rulings at the revealed forced `step` that `exactness` excuses: those
 * awaiting a reveal, decided on a `state` claim whose honest post-state the
 * proof shows the committed leaf to be the forced mark of.
 * Fails the call if there is none.
 */
export function excusedBy (
  ctx: Context, t: { proofRoot: string, stepCount: number, rulings: ProofRuling[] }, step: number, exactness: string, rootEvery = 1
): ProofRuling[] {
  const waiting = t.rulings.filter(r => r.step === step && r.outcome === 'AwaitingReveal')
  const candidates = waiting.filter(excusable)
  ctx.ensure(candidates.length > 0, P, 'RulingNotExcusable')
  const proof = hexToU8a(exactness)
  const ok = new Set<string>()
  for (const post of new Set(candidates.map(r => r.honestPost as string))) {
    const r = checkForcedLeaf({ step, proofRoot: hexToU8a(t.proofRoot), stepCount: t.stepCount, rootEvery, honestPost: hexToU8a(post) }, proof)
    if (r.ok) ok.add(post)
  }
  ctx.ensure(ok.size > 0, P, 'NotExactForcedError')
  return candidates.filter(r => ok.has(r.honestPost as string))
}

interface DrawTask { selectionSeed: string, steps: number, checkpointEvery: number }
interface DrawShape { ppm: number, rootEvery: number }
interface DrawOf extends DrawShape { publicKey: Uint8Array, taskId: bigint, selectionSeed: Uint8Array, steps: number, checkpointEvery: number }

/** What both VRF checks (one pick, the whole draw) read of the task and its solver. */
function drawOf (t: DrawTask, who: string, taskId: bigint, shape: DrawShape): DrawOf {
  const { selectionSeed, steps, checkpointEvery } = t
  return { publicKey: hexToU8a(who), taskId, selectionSeed: hexToU8a(selectionSeed), steps, checkpointEvery, ppm: shape.ppm, rootEvery: shape.rootEvery }
}

/**
 * One pick of the solver's draw for a task, from its revealed VRF
 * (reveal_forced_error): the forced step it orders, or null. Fails the call
 * if the VRF is not the solver's over one of the task's pick transcripts.
 */
export function solverPick (
  ctx: Context, t: { selectionSeed: string, steps: number, checkpointEvery: number }, who: string,
  a: { taskId: bigint, vrfOutput: string, vrfProof: string }, shape: { ppm: number, rootEvery: number }
): number | null {
  const r = checkForcedErrorReveal({
    ...drawOf(t, who, a.taskId, shape),
    output: hexToU8a(a.vrfOutput),
    proof: hexToU8a(a.vrfProof)
  }, vrfVerify)
  if (!r.ok) ctx.fail(P, r.reason)
  return r.step
}

/**
 * The solver's whole draw (reveal_draw): every pick's VRF, pick 1 first; the
 * forced steps, ascending (none: empty). Fails the call if any VRF is not the
 * solver's over its pick's transcript.
 */
export function solverDraw (
  ctx: Context, t: { selectionSeed: string, steps: number, checkpointEvery: number }, who: string,
  a: { taskId: bigint, vrfOutputs: string[], vrfProofs: string[] }, shape: { ppm: number, rootEvery: number }
): number[] {
  const r = checkDrawReveal({
    ...drawOf(t, who, a.taskId, shape),
    outputs: a.vrfOutputs.map(x => hexToU8a(x)),
    proofs: a.vrfProofs.map(x => hexToU8a(x))
  }, vrfVerify)
  if (!r.ok) ctx.fail(P, r.reason)
  return r.steps
}
