import { challengeableCheckpoints } from '../../protocols/verification/checkpoint-steps.js'
import { requiredSample } from '../../protocols/verification/verdict.js'
import type { ChainClient } from '../chain/client.js'

// What a verifier's sample rests on: the randomness of its draw's block, and
// the checkpoints its required sample lets it challenge.

/** The checkpoints the chain lets a node challenge as an assigned verifier of `task` (availability.ts ensureNeeded). */
export function challengeableOf (
  task: { stepCount: number, verifierCount: number, checkpointEvery: number, divergence?: unknown }, seed: string, account: string, m: number
): number[] {
  const required = task.stepCount === 0 ? [] : requiredSample(seed, account, task.stepCount, task.verifierCount, m)
  return challengeableCheckpoints(required, task.stepCount, task.checkpointEvery, m, task.divergence != null)
}

/** The randomness of `block` (its hash), once the chain has produced it (120 s at most). */
export async function waitForRandomness (chain: Pick<ChainClient, 'randomness'>, block: number): Promise<string> {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const r = await chain.randomness(block)
    if (r != null) return r
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  throw new Error(`block ${block} (verification randomness) was not produced within 120 s`)
}
