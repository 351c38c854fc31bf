import { hexToU8a } from '@polkadot/util'
import { FORCED_ERROR_VRF_CONTEXT, forcedErrorTranscript, forcedErrorsFromOutput } from '../../protocols/dispute/forced-error.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'

// The solver's private Truebit draw (protocols/dispute/forced-error.ts): its
// sr25519 VRF over task id ‖ selection seed. Only this node can compute it,
// so the chain (and every verifier) learns a forced step only if the solver
// reveals it, after a dispute at that step was ruled against it, or at
// settlement (reveal_draw).

export interface ForcedDraw {
  /** on-chain steps f (transitions f → f+1), ascending, whose committed post-state leaves the solver marks; none: empty */
  steps: number[]
  output: Uint8Array
  proof: Uint8Array
}

const cache = new Map<string, ForcedDraw>()

/** This node's draw for a task it solves; null when it is not the task's solver. */
export async function forcedErrorDraw (chain: ChainClient, taskId: number | bigint, task: TaskInfo): Promise<ForcedDraw | null> {
  if (task.solver !== chain.accountId) return null
  const key = `${chain.accountId}:${String(taskId)}:${task.selectionSeed}`
  const known = cache.get(key)
  if (known != null) return known
  const { forcedErrorPpm } = await chain.params()
  // the forced post-states are committed leaves that are not checkpoints
  const rootEvery = await chain.rootEvery(taskId)
  const vrf = chain.pair.vrfSign(forcedErrorTranscript(BigInt(taskId), hexToU8a(task.selectionSeed)), FORCED_ERROR_VRF_CONTEXT)
  const output = vrf.slice(0, 32)
  const draw = { steps: forcedErrorsFromOutput(output, task.steps, forcedErrorPpm, rootEvery, task.checkpointEvery), output, proof: vrf.slice(32) }
  cache.set(key, draw)
  return draw
}
