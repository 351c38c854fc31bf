import { hexToU8a } from '@polkadot/util'
import { FORCED_ERROR_VRF_CONTEXT, forcedErrorFromOutput, forcedErrorTranscript } from '../../protocols/dispute/forced-error.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'

// The solver's private Truebit draw (protocols/dispute/forced-error.ts): its
// sr25519 VRF over task id ‖ selection seed. Only this node can compute it,
// so the chain (and every verifier) learns the forced step only if the solver
// reveals it, after a dispute at that step was ruled against it.

export interface ForcedDraw {
  /** on-chain step f (transition f → f+1) whose committed post-state leaf the solver marks, or null */
  step: number | null
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
  // the forced post-state is a committed leaf that is not a checkpoint
  const rootEvery = await chain.rootEvery(taskId)
  const vrf = chain.pair.vrfSign(forcedErrorTranscript(BigInt(taskId), hexToU8a(task.selectionSeed)), FORCED_ERROR_VRF_CONTEXT)
  const output = vrf.slice(0, 32)
  const draw = { step: forcedErrorFromOutput(output, task.steps, forcedErrorPpm, rootEvery, task.checkpointEvery), output, proof: vrf.slice(32) }
  cache.set(key, draw)
  return draw
}
