import type { TaskProgram } from '../../../protocols/program/program.js'
import type { TopologyInfo } from '../../../protocols/program/topology.js'
import { taskFeasibility, type FeasibilityBounds, type TaskTimes } from '../../../protocols/scheduling/feasibility.js'
import { rewardFloor, rewardFloorError, type PriceBounds } from '../../../protocols/scheduling/price.js'
import type { Context } from './context.js'

// A task that no conforming solver can train must not reach a solver. The
// selected solver's scheduler would see it cannot finish and hand the task back,
// paying the release fee, and so would every solver after it, while the
// submitter got its escrow back when the task expired: griefing every solver
// for nothing. The fee itself stays (a free release would let solvers pass a
// task around until one whose VRF drew no forced error holds it), so the chain
// refuses such tasks instead: its memory must fit max_task_memory and its
// solve_timeout must cover the training at the network's reference speed twice
// over. A task inside these bounds is trainable by any solver that meets them;
// a release is the solver's own doing again.
//
// Likewise a challenge window no drawn verifier can meet: every verifier lapses
// and pays the silence penalty, round after round, the task ends Unverified
// with the escrow back, and the submitter keeps the published training
// unpaid. So its challenge_window must cover, at the reference speed twice
// over, a verifier's replay of its sample and the re-run that backs a reject.
//
// And rewards that do not pay the work: the selected solver trains or pays the
// release fee, a drawn verifier replays or pays the silence penalty, so a task
// offering nothing got trained and verified for its capacity rent while each
// party picked for it worked for nothing or paid to refuse. So its rewards
// must pay that work (the training, one verifier's replays) at the network's
// reference_block_price.

const P = 'Arbitration'

export function checkFeasible (ctx: Context, params: FeasibilityBounds, times: Required<TaskTimes>, program: TaskProgram & { info: TopologyInfo }): void {
  const { error } = taskFeasibility(program, params, times)
  if (error !== undefined) ctx.fail(P, error)
}

export function checkRewards (
  ctx: Context, params: PriceBounds, a: { solverReward: bigint, verifierReward: bigint, verifierCount: number }, program: TaskProgram & { info: TopologyInfo }
): void {
  const error = rewardFloorError(rewardFloor(program, params, a.verifierCount), a)
  if (error !== undefined) ctx.fail(P, error)
}
