import { hexToU8a } from '@polkadot/util'
import { FORCED_ERRORS_PER_DRAW, FORCED_ERROR_VRF_CONTEXT, forcedErrorFromOutput, forcedErrorTranscript } from '../../protocols/dispute/forced-error.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'

// The solver's private Truebit draw (protocols/dispute/forced-error.ts): its
// sr25519 VRFs over task id ‖ selection seed ‖ pick, one per pick. Only this
// node can compute them, so the chain (and every verifier) learns a forced
// step only if the solver reveals its pick, after a dispute at that step was
// ruled against it, or the whole draw at settlement (reveal_draw).

export interface ForcedPick {
  /** on-chain step f (transition f → f+1) whose committed post-state leaf the solver marks, or null */
  step: number | null
  output: Uint8Array
  proof: Uint8Array
}

export interface ForcedDraw {
  /** the forced steps, ascending (none: empty) */
  steps: number[]
  /** every pick, pick 1 first (reveal_draw reveals them all; reveal_forced_error the one of a ruled step) */
  picks: ForcedPick[]
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
  const picks: ForcedPick[] = []
  for (let pick = 1; pick <= FORCED_ERRORS_PER_DRAW; pick++) {
    const vrf = chain.pair.vrfSign(forcedErrorTranscript(BigInt(taskId), hexToU8a(task.selectionSeed), pick), FORCED_ERROR_VRF_CONTEXT)
    const output = vrf.slice(0, 32)
    picks.push({ step: forcedErrorFromOutput(output, task.steps, forcedErrorPpm, rootEvery, task.checkpointEvery), output, proof: vrf.slice(32) })
  }
  const steps = [...new Set(picks.flatMap(p => p.step === null ? [] : [p.step]))].sort((a, b) => a - b)
  const draw = { steps, picks }
  cache.set(key, draw)
  return draw
}
