import type { TaskProgram } from '../program/program.js'
import type { TopologyInfo } from '../program/topology.js'
import { jobMemory, minSolveBlocks, programSize } from './estimate.js'

// Whether any solver that meets a network's bounds can train a task in time:
// the one rule the chain applies at submit_task and a submitter applies
// first, to refuse with the numbers before doing any work.

export interface FeasibilityBounds { maxTaskMemory: bigint | number, referenceFlopsPerBlock: bigint | number }

export interface Feasibility {
  /** bytes one training job needs (jobMemory) */
  memory: number
  /** the fewest blocks the solve timeout may have */
  minSolveBlocks: number
  /** the pallet error that refuses the task, if any (the timeout is checked only when given) */
  error?: 'TaskTooLarge' | 'SolveTimeoutTooShort'
}

export function taskFeasibility (program: TaskProgram & { info: TopologyInfo }, bounds: FeasibilityBounds, solveTimeout?: number): Feasibility {
  const size = programSize(program)
  const f: Feasibility = { memory: jobMemory(size), minSolveBlocks: minSolveBlocks(size, Number(bounds.referenceFlopsPerBlock)) }
  if (f.memory > Number(bounds.maxTaskMemory)) f.error = 'TaskTooLarge'
  else if (solveTimeout !== undefined && solveTimeout < f.minSolveBlocks) f.error = 'SolveTimeoutTooShort'
  return f
}
