import type { TaskProgram } from '../../../protocols/program/program.js'
import type { TopologyInfo } from '../../../protocols/program/topology.js'
import { programSize, referenceRerunBlocks, stepCostMicroblocks } from '../../../protocols/scheduling/estimate.js'
import type { Params, TaskInfo } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'

// The price in blocks of a re-run from a checkpoint (part of the Arbitration
// pallet; docs/disputes.md "Windows"): a dispute's tape allowance, the share
// of its defender's tape queue it takes, the backing grace of a rejecting
// verifier. At the submitter's pace alone (solve_timeout / steps per step) a
// coalition's task of a few steps and solve_timeout MaxTaskPeriod made each of
// its puppets' disputes take 2^24 blocks of its solver's queue, stalling every
// honest task of that solver behind them. So a re-run is priced at most at
// what the program's steps cost at the network's reference speed (the speed
// submit_task already holds every solver to), stored per task at submission:
// never more than the submitter allowed, never more than the program needs.

const P = 'Arbitration'

/** A task's program cost at the reference speed: millionths of a block per step, and the chain's reference_flops_per_block. */
export interface ReferenceCost { stepCost: number, flopsPerBlock: number }

/** submit_task: store the program's per-step cost at the reference speed. */
export function setStepCost (ctx: Context, taskId: bigint, program: TaskProgram & { info: TopologyInfo }, p: Pick<Params, 'referenceFlopsPerBlock'>): void {
  ctx.store.put(P, 'TaskStepCost', taskId, stepCostMicroblocks(programSize(program), Number(p.referenceFlopsPerBlock)))
}

/** The task's reference cost; undefined for a task stored without one (priced at its submitter's pace alone). */
export function referenceCostOf (ctx: Context, taskId: bigint, p: Pick<Params, 'referenceFlopsPerBlock'>): ReferenceCost | undefined {
  const c = ctx.store.get<bigint | number>(P, 'TaskStepCost', taskId)
  return c === undefined ? undefined : { stepCost: Number(c), flopsPerBlock: Number(p.referenceFlopsPerBlock) }
}

/**
 * Blocks granted for a re-run of `n` steps of the task: the submitter's pace,
 * ⌈n · solve_timeout / steps⌉, or the program's cost at the reference speed
 * (referenceRerunBlocks: twice the steps' work and an engine start) if less.
 */
export function rerunAllowance (t: Pick<TaskInfo, 'steps' | 'solveTimeout'>, n: number, cost?: ReferenceCost): number {
  const submitter = Math.ceil(n * t.solveTimeout / t.steps)
  return cost === undefined ? submitter : Math.min(submitter, referenceRerunBlocks(n, cost.stepCost, cost.flopsPerBlock))
}
