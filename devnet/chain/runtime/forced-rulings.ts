import { hexToU8a, u8aToHex } from '@polkadot/util'
import type { Claim } from '../../../protocols/dispute/claim.js'
import { checkForcedErrorReveal } from '../../../protocols/dispute/forced-error.js'
import { checkForcedLeaf, rulingBasis } from '../../../protocols/dispute/forced-leaf.js'
import type { DrawRequest, ProofRuling, RulingClaimKind, RulingOutcome } from '../../../protocols/pallet-types.js'
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

const KINDS: Record<Claim['kind'], RulingClaimKind> = { skeleton: 'Skeleton', input: 'Input', state: 'State', element: 'Element', data: 'Data', lie: 'Lie', badOpen: 'BadOpen', init: 'Init', nan: 'Nan' }

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
 * The rulings at the revealed forced `steps` that `exactness` excuses: those
 * awaiting a reveal, decided on a `state` claim whose honest post-state the
 * proof shows the committed leaf after their step to be the forced mark of
 * (the proof is a Merkle path at one leaf: it excuses the rulings of one step).
 * Fails the call if there is none.
 */
export function excusedBy (
  ctx: Context, t: { proofRoot: string, stepCount: number, rulings: ProofRuling[] }, steps: readonly number[], exactness: string, rootEvery = 1
): ProofRuling[] {
  const candidates = t.rulings.filter(r => steps.includes(r.step) && r.outcome === 'AwaitingReveal' && excusable(r))
  ctx.ensure(candidates.length > 0, P, 'RulingNotExcusable')
  const proof = hexToU8a(exactness)
  const ok = new Set<string>()
  for (const key of new Set(candidates.map(r => `${r.step}:${r.honestPost as string}`))) {
    const [step, post] = key.split(':') as [string, string]
    const r = checkForcedLeaf({ step: Number(step), proofRoot: hexToU8a(t.proofRoot), stepCount: t.stepCount, rootEvery, honestPost: hexToU8a(post) }, proof)
    if (r.ok) ok.add(key)
  }
  ctx.ensure(ok.size > 0, P, 'NotExactForcedError')
  return candidates.filter(r => ok.has(`${r.step}:${r.honestPost as string}`))
}

/**
 * The solver's draw for a task, from its revealed VRF (reveal_forced_error,
 * reveal_draw): the forced steps, ascending (none: empty). Fails the call if
 * the VRF is not the solver's over the task's transcript.
 */
export function solverDraw (
  ctx: Context, t: { selectionSeed: string, steps: number, checkpointEvery: number }, who: string,
  a: { taskId: bigint, vrfOutput: string, vrfProof: string }, shape: { ppm: number, rootEvery: number }
): number[] {
  const r = checkForcedErrorReveal({
    publicKey: hexToU8a(who),
    taskId: a.taskId,
    selectionSeed: hexToU8a(t.selectionSeed),
    steps: t.steps,
    ppm: shape.ppm,
    rootEvery: shape.rootEvery,
    checkpointEvery: t.checkpointEvery,
    output: hexToU8a(a.vrfOutput),
    proof: hexToU8a(a.vrfProof)
  }, vrfVerify)
  if (!r.ok) ctx.fail(P, r.reason)
  return r.steps
}

/**
 * The solver's draw, once its VRF was checked (reveal_forced_error): kept as
 * a revealed DrawRequest, so settlement knows every forced step without
 * asking for the draw again (draw-reveal.ts).
 */
export function keepDraw (ctx: Context, taskId: bigint, steps: number[]): void {
  const r: DrawRequest = { deadline: ctx.now, revealed: true, forcedStep: steps[0] ?? null, forcedSteps: steps }
  ctx.store.put(P, 'DrawRequests', taskId, r)
}
