import { rootEveryOf, type TaskProgram } from '../program/program.js'
import type { TopologyInfo } from '../program/topology.js'
import { jobMemory, minChallengeBlocks, minSolveBlocks, programSize } from './estimate.js'

// Whether any solver that meets a network's bounds can train a task in time,
// and any verifier drawn for it can replay its sample and back a reject within
// the challenge window: the rules the chain applies at submit_task and a
// submitter applies first, to refuse with the numbers before doing any work.

export interface FeasibilityBounds { maxTaskMemory: bigint | number, referenceFlopsPerBlock: bigint | number }

/** The task's times as asked (each checked only when given) and its verifier count, which sizes each verifier's sample. */
export interface TaskTimes { solveTimeout?: number, challengeWindow?: number, verifierCount: number }

export interface Feasibility {
  /** bytes one training job needs (jobMemory) */
  memory: number
  /** the fewest blocks the solve timeout may have */
  minSolveBlocks: number
  /** the fewest blocks the challenge window may have */
  minChallengeBlocks: number
  /** the pallet error that refuses the task, if any */
  error?: 'TaskTooLarge' | 'SolveTimeoutTooShort' | 'ChallengeWindowTooShort'
}

/** The fewest blocks a validated program's challenge window may have with `verifierCount` verifiers (minChallengeBlocks). */
export function programChallengeBlocks (program: TaskProgram & { info: TopologyInfo }, verifierCount: number, flopsPerBlock: number): number {
  const shape = { checkpointEvery: program.checkpointEvery, rootEvery: rootEveryOf(program), verifierCount }
  return minChallengeBlocks(programSize(program), shape, flopsPerBlock)
}

export function taskFeasibility (program: TaskProgram & { info: TopologyInfo }, bounds: FeasibilityBounds, times: TaskTimes): Feasibility {
  const size = programSize(program)
  const flopsPerBlock = Number(bounds.referenceFlopsPerBlock)
  const f: Feasibility = {
    memory: jobMemory(size),
    minSolveBlocks: minSolveBlocks(size, flopsPerBlock),
    minChallengeBlocks: programChallengeBlocks(program, times.verifierCount, flopsPerBlock)
  }
  if (f.memory > Number(bounds.maxTaskMemory)) f.error = 'TaskTooLarge'
  else if (times.solveTimeout !== undefined && times.solveTimeout < f.minSolveBlocks) f.error = 'SolveTimeoutTooShort'
  else if (times.challengeWindow !== undefined && times.challengeWindow < f.minChallengeBlocks) f.error = 'ChallengeWindowTooShort'
  return f
}
