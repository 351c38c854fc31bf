import type { Params } from '../../devnet/chain/runtime/arbitration.js'
import type { ReferenceCost } from '../../devnet/chain/runtime/rerun-cost.js'
import type { Harness } from '../unit/chain/harness.js'

/** What submit_task stored of task `taskId`'s program cost at the reference speed (TaskStepCost), with the chain's reference_flops_per_block. */
export function referenceCostOn (h: Harness, taskId = 0): ReferenceCost {
  const stepCost = h.read<bigint | number>('Arbitration', 'TaskStepCost', taskId)
  if (stepCost === undefined) throw new Error(`task ${taskId} has no TaskStepCost`)
  return { stepCost: Number(stepCost), flopsPerBlock: Number(h.read<Params>('Arbitration', 'Params')!.referenceFlopsPerBlock) }
}
