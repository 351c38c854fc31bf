import type { KeyringPair } from '@polkadot/keyring/types'
import { fromHex } from '../../protocols/commit/merkle.js'
import { SegmentChallenger, type DisputeContext } from '../../protocols/dispute/index.js'
import { samePreHex } from '../../protocols/dispute/forced-leaf.js'
import { rootEveryOfProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { committedStep, segmentLength, segmentOfStep } from '../../protocols/pol/segments.js'
import type { TapeFile } from '../engine/tape-file.js'
import { nanFacts } from './players.js'

// The challenger's level above the step game when the proof commits a root
// every m > 1 steps (docs/disputes.md "Segments"): the bad 1-based step a
// verifier found lies in segment j; the challenger disputes j only if it
// agrees with leaf j and not with leaf j + 1, then opens the first transition
// of the defender's signed segment whose post-root differs from its own. A
// segment that replays to both committed leaves is disputed only for a NaN
// the challenger's tape of a step inside it shows (an honest run commits
// none): that step is opened although its roots agree.

export interface SegmentPlan {
  j: number
  /** c_j, the segment's first state */
  first: number
  /** L transitions */
  length: number
}

/** The segment holding 1-based step `step` of a proof with a root every m > 1 steps. */
export function segmentPlanOf (proof: ProofOfLearning, step: number): SegmentPlan {
  const m = rootEveryOfProof(proof)
  if (m === 1) throw new Error('not a proof with a root every m > 1 steps')
  const { j } = segmentOfStep(step - 1, proof.steps, m)
  return { j, first: committedStep(j, proof.steps, m), length: segmentLength(j, proof.steps, m) }
}

/**
 * Only dispute what we can win: our replay of the segment (its L + 1 roots,
 * hex) starts at the committed leaf j and does not end at leaf j + 1, or
 * (`nanAt`) our tape of on-chain step `nanAt` inside the segment holds a NaN
 * the defender committed with roots we agree with.
 */
export function segmentDisputeError (plan: SegmentPlan, proof: ProofOfLearning, own: readonly string[], nanAt?: number): string | undefined {
  if (own.length !== plan.length + 1) return `our replay of segment ${plan.j} has ${own.length} roots, not ${plan.length + 1}`
  const leaf = (i: number): string => proof.stateRoots[i].replace(/^0x/, '')
  // a forced error's marked leaf j stands for the honest state we replayed from
  if (!samePreHex(leaf(plan.j), own[0])) return `our state after step ${plan.first} differs from leaf ${plan.j} of the proof: dispute an earlier segment`
  if (nanAt !== undefined && (nanAt < plan.first || nanAt >= plan.first + plan.length)) return `step ${nanAt + 1} is not in segment ${plan.j}`
  if (nanAt === undefined && segmentEndAgrees(plan, proof, own)) {
    return `segment ${plan.j} (steps ${plan.first + 1}…${plan.first + plan.length}) replays to the committed leaf ${plan.j + 1}: nothing to dispute`
  }
  return undefined
}

/**
 * The on-chain step of our tape when it holds a NaN the defender committed
 * (a complete proof commits none) and starts from our replay of the
 * segment's roots (`own`, hex), so the defender signed that pre-root too.
 */
export function nanStepOf (tape: TapeFile, plan: SegmentPlan, own: readonly string[]): number | undefined {
  const i = tape.step - plan.first
  if (i < 0 || i >= plan.length || tape.stateRootBefore !== own[i]) return undefined
  return nanFacts(tape).wrong ? tape.step : undefined
}

/** Whether our replay of the segment ends at its committed leaf j + 1 (then only a NaN is left to dispute). */
export function segmentEndAgrees (plan: SegmentPlan, proof: ProofOfLearning, own: readonly string[]): boolean {
  return own.length === plan.length + 1 && own[plan.length] === proof.stateRoots[plan.j + 1].replace(/^0x/, '')
}

interface SegmentChallengerSetup {
  disputeId: number
  ctx: DisputeContext
  pair: KeyringPair
  defender: Uint8Array
  plan: SegmentPlan
  proof: ProofOfLearning
  own: readonly string[]
  /** the step whose tape holds a NaN the defender committed (nanStepOf) */
  nanAt?: number
}

export function segmentChallengerOf (
  o: SegmentChallengerSetup
): SegmentChallenger {
  return new SegmentChallenger({
    disputeId: o.disputeId,
    genesis: o.ctx.genesis,
    taskId: o.ctx.taskId,
    account: o.pair.publicKey,
    sign: m => o.pair.sign(m),
    j: o.plan.j,
    rootEvery: rootEveryOfProof(o.proof),
    steps: o.proof.steps,
    stateRoots: o.proof.stateRoots,
    defender: o.defender,
    own: o.own.map(fromHex),
    ...(o.nanAt !== undefined ? { nanAt: o.nanAt } : {})
  })
}
