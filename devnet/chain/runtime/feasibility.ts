import type { TaskProgram } from '../../../protocols/program/program.js'
import type { TopologyInfo } from '../../../protocols/program/topology.js'
import { taskFeasibility, type FeasibilityBounds } from '../../../protocols/scheduling/feasibility.js'
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

const P = 'Arbitration'

export function checkFeasible (ctx: Context, params: FeasibilityBounds, solveTimeout: number, program: TaskProgram & { info: TopologyInfo }): void {
  const { error } = taskFeasibility(program, params, solveTimeout)
  if (error !== undefined) ctx.fail(P, error)
}
