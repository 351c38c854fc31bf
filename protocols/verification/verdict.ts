import { sampleSteps, samplesPerVerifier } from './sample.js'

// What an accepting verdict must vouch for. The chain refuses an accepting
// verdict whose checked steps lack the verifier's own sample (SampleNotChecked),
// so "accept" cannot be said without having replayed the steps the chain's
// randomness picked for this verifier. Node and runtime both use these
// functions, so they agree on the count, the cap and the steps.

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
 * account (hex).
 */
export function requiredSample (seedHex: string, accountHex: string, stepCount: number, verifierCount: number): number[] {
  return sampleSteps(seedHex, accountHex, stepCount, requiredSampleCount(verifierCount))
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
