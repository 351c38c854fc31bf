import { u8aToHex } from '@polkadot/util'
import { sha256 } from '../../protocols/commit/merkle.js'
import { ASCII_VOCAB } from '../../protocols/program/gpt.js'
import { newProgram, programBytes, type DatasetRef, type NewProgramOptions, type TaskProgram } from '../../protocols/program/index.js'
import { validateProgram } from '../../protocols/program/program.js'
import { REFERENCE_FLOPS } from '../../protocols/scheduling/estimate.js'
import { programChallengeBlocks } from '../../protocols/scheduling/feasibility.js'
import { rewardFloor, type PriceBounds } from '../../protocols/scheduling/price.js'
import { DEV_PRICE_PER_SECOND } from '../../devnet/chain/dev-spec.js'

// A real task program for chain tests: submit_task carries the canonical
// program bytes and refuses a program the chain could not adjudicate.

export const TEST_DATASET: DatasetRef = { kind: 'synthetic', name: 'synthetic-test', sha256: 'ab'.repeat(32), trainSize: 1024, testSize: 0, rowSize: 784, classes: 10, syntheticSeed: 1 }

/** A text dataset reference for GPT programs (fortunes-min shaped: context 64, 96 characters). */
export const TEST_TEXT: DatasetRef = { kind: 'text', name: 'fortunes-min', sha256: 'cd'.repeat(32), trainSize: 1383, testSize: 153, rowSize: 64 * 96, classes: 64 * 96, text: { vocab: ASCII_VOCAB, context: 64 } }

export interface ProgramArgs { program: TaskProgram, bytes: Uint8Array, programHash: string, programHex: string }

export function taskProgram (o: Partial<NewProgramOptions> = {}): ProgramArgs {
  const program = newProgram({ model: 'mlp', dataset: TEST_DATASET, steps: 100, checkpointEvery: 10, ...o })
  const bytes = programBytes(program)
  return { program, bytes, programHash: u8aToHex(sha256(bytes)), programHex: u8aToHex(bytes) }
}

/**
 * The fewest blocks the chain takes as this program's challenge window with
 * `verifierCount` verifiers (protocols/scheduling/estimate.ts minChallengeBlocks),
 * at the dev chain's reference speed with 1 s blocks unless given.
 */
export function minWindow (p: ProgramArgs | TaskProgram, verifierCount: number, flopsPerBlock = REFERENCE_FLOPS): number {
  return programChallengeBlocks(validateProgram('program' in p ? p.program : p), verifierCount, flopsPerBlock)
}

const DEV_PRICE: PriceBounds = { referenceFlopsPerBlock: REFERENCE_FLOPS, referenceBlockPrice: DEV_PRICE_PER_SECOND }

/**
 * The least rewards the chain takes for this program with `verifierCount`
 * verifiers (protocols/scheduling/price.ts rewardFloor), at the dev chain's
 * reference speed and price with 1 s blocks unless given.
 */
export function minRewards (p: ProgramArgs | TaskProgram, verifierCount: number, bounds = DEV_PRICE): { solverReward: bigint, verifierReward: bigint } {
  const f = rewardFloor(validateProgram('program' in p ? p.program : p), bounds, verifierCount)
  return { solverReward: f.minSolverReward, verifierReward: f.minVerifierReward }
}
