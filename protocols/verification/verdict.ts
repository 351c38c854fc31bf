import { committedStep, segmentCount } from '../pol/segments.js'
import { sampleSegments, samplesPerVerifier } from './sample.js'

// What an accepting verdict must vouch for. The chain refuses an accepting
// verdict whose checked steps lack the verifier's own sample (SampleNotChecked),
// so "accept" cannot be said without having replayed the steps the chain's
// randomness picked for this verifier. Node and runtime both use these
// functions, so they agree on the count, the cap and the steps.
//
// Units. The node names what it checked by 1-based steps: at m = 1 the step s
// (the transition from state s-1 to s), at m > 1 the last step c_{j+1} of
// segment j, and a diverged proof's last step k+1. On chain, `checked_steps`
// lists 0-based units (checkedUnitOf): at m = 1 the transition s-1, at m > 1
// the segment j (as open_dispute's disputed_step at m > 1), and a diverged
// proof's last step as unit segmentCount(k, m) (k at m = 1), one past the last
// segment. At m = 1 both are exactly what they always were.

/** Most steps a verdict may list (the chain's bound on checked_steps). */
export const MAX_CHECKED_STEPS = 1024

/** How many sampled steps an accepting verdict must list: a verifier's share of the detection goal, within the cap. */
export function requiredSampleCount (verifierCount: number): number {
  return Math.min(samplesPerVerifier(verifierCount), MAX_CHECKED_STEPS)
}

/**
 * How many steps a verifier samples: the required count, or more when asked
 * (`--verify-steps`). Never fewer, since the chain would refuse the verdict;
 * samples have a prefix property, so a larger sample contains the required one.
 */
export function verifierSampleCount (verifierCount: number, override?: number): number {
  const required = requiredSampleCount(verifierCount)
  return override === undefined || !(override > required) ? required : override
}

/**
 * The 1-based steps an accepting verdict must list: the verifier's sample of
 * the required size, from the hash of block committed_at + 1 (hex) and its
 * account (hex). With roots every m > 1 steps, segments named by their last step.
 */
export function requiredSample (seedHex: string, accountHex: string, stepCount: number, verifierCount: number, rootEvery = 1): number[] {
  return sampleSegments(seedHex, accountHex, stepCount, rootEvery, requiredSampleCount(verifierCount))
}

/**
 * The chain's unit of a 0-based transition `step` (a ruling's step, a forced
 * error): the step itself at m = 1; at m > 1 its segment ⌊step / m⌋, and for a
 * diverged proof's last step (step = stepCount) the unit after the last segment.
 */
export function unitOfTransition (step: number, stepCount: number, rootEvery: number): number {
  if (rootEvery === 1) return step
  return step >= stepCount ? segmentCount(stepCount, rootEvery) : Math.floor(step / rootEvery)
}

/**
 * The 0-based transitions a chain unit names (a `checked_steps` entry, open_dispute's
 * disputed_step): the unit itself at m = 1; at m > 1 segment j's transitions c_j … c_{j+1} − 1,
 * and for the unit after the last segment a diverged proof's last step (stepCount).
 */
export function transitionsOfUnit (unit: number, stepCount: number, rootEvery: number): number[] {
  if (rootEvery === 1) return [unit]
  if (unit >= segmentCount(stepCount, rootEvery)) return [stepCount]
  const from = committedStep(unit, stepCount, rootEvery)
  return Array.from({ length: committedStep(unit + 1, stepCount, rootEvery) - from }, (_, i) => from + i)
}

/** The chain's checked unit (`checked_steps` entry) of a node's 1-based checked step: s - 1 at m = 1. */
export function checkedUnitOf (step: number, stepCount: number, rootEvery: number): number {
  return unitOfTransition(step - 1, stepCount, rootEvery)
}

/** How many units `checked_steps` may name: the transitions (segments at m > 1), and a diverged proof's last step. */
export function checkableUnits (stepCount: number, diverged: boolean, rootEvery: number): number {
  return segmentCount(stepCount, rootEvery) + (diverged ? 1 : 0)
}

/** The required steps missing from a verdict's list (both 1-based); empty when the verdict covers its sample. */
export function missingSampled (required: number[], checked: number[]): number[] {
  const listed = new Set(checked)
  return required.filter(s => !listed.has(s))
}

/**
 * The steps to list in a verdict (at most `cap`): the checked steps that are
 * in the required sample first, then the other checked steps, without
 * duplicates. Only checked steps are listed (a verdict vouches for each); the
 * order keeps the sample in when a verifier replayed more than the cap (a
 * whole > 1024-step run, say).
 */
export function verdictSteps (required: number[], checked: number[], cap = MAX_CHECKED_STEPS): number[] {
  const have = new Set(checked)
  const out: number[] = []
  const seen = new Set<number>()
  for (const s of [...required.filter(x => have.has(x)), ...checked]) {
    if (out.length >= cap) break
    if (seen.has(s)) continue
    seen.add(s)
    out.push(s)
  }
  return out
}

/**
 * Whether a verifier with required sample `required` (1-based, requiredSample)
 * had to check the 0-based transition `step` (a forced error, a ruling): its
 * unit (segment at m > 1) is one the sample names, or it is a diverged proof's
 * last step, which every accept lists. Exactly the verifiers whose accept
 * would have vouched for the step.
 */
export function sampleHoldsTransition (required: number[], step: number, stepCount: number, diverged: boolean, rootEvery: number): boolean {
  const unit = unitOfTransition(step, stepCount, rootEvery)
  if (diverged && unit === checkedUnitOf(stepCount + 1, stepCount, rootEvery)) return true
  return required.some(s => checkedUnitOf(s, stepCount, rootEvery) === unit)
}
