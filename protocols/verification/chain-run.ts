import { proofRootOf, type CheckpointRef, type ProofOfLearning } from '../pol/proof.js'
import { leafCount } from '../pol/segments.js'
import { checkpointStepsOf } from './checkpoint-steps.js'
import { checkpointLoads } from './sample.js'

// A run whose run index or proof.json is withheld, rebuilt from the chain
// alone (docs/disputes.md "Withheld checkpoints"): the program is in the task's
// submit_task extrinsic, the checkpoint steps follow from the task
// (checkpointStepsOf), the committed state roots are the leaves of proof_root
// that the first part of any serve carries, and each checkpoint a replay loads
// is the state its serve put on chain. What a verifier challenges when it
// cannot obtain the published run is therefore every checkpoint its replay
// loads, at once (after a serve it may challenge no more), and checkpoint 0,
// whose state an initial-state claim needs if the served roots do not start
// at the program's initialisation.

/**
 * The checkpoints a verifier needs served when the run index or proof.json is withheld:
 * every one the replay of `sampled` (1-based steps; at m > 1 segment ends) loads, the
 * diverged last state if the proof diverged, and 0. Ascending.
 */
export function withheldRunCheckpoints (
  sampled: readonly number[], task: { stepCount: number, checkpointEvery: number, diverged: boolean }, rootEvery = 1
): number[] {
  const out = new Set<number>([0])
  const steps = checkpointStepsOf(task.stepCount, task.checkpointEvery)
  if (sampled.length > 0) for (const s of checkpointLoads(sampled, steps, rootEvery, task.stepCount)) out.add(s)
  if (task.diverged) out.add(task.stepCount)
  return [...out].sort((a, b) => a - b)
}

/**
 * The proof a replay compares against, from the chain: `roots` are the leaves of proof_root as a
 * serve carried them (hex), checked here against the committed root; `checkpoints` are the
 * served checkpoints the verifier wrote (a manifest of its own for each, as a served state has
 * none): a replay or a dispute's tape starts from the latest of them before its step, which for
 * the steps of the sample is the one the run's own checkpoints would give (withheldRunCheckpoints).
 */
export function proofFromChain (o: {
  programHash: string
  runtime: string
  proofRoot: string
  stepCount: number
  rootEvery: number
  roots: readonly string[]
  checkpoints: readonly CheckpointRef[]
  divergence?: { entry: number, flat: number } | null
}): ProofOfLearning {
  const m = o.rootEvery
  const roots = o.roots.map(r => r.replace(/^0x/, ''))
  if (roots.length !== leafCount(o.stepCount, m)) throw new Error(`the served roots are ${roots.length}, a proof of ${o.stepCount} steps at m = ${m} has ${leafCount(o.stepCount, m)}`)
  const proofRoot = proofRootOf(roots)
  if (proofRoot !== o.proofRoot.replace(/^0x/, '')) throw new Error('the served roots do not hash to the committed proof root')
  return {
    version: 1,
    programHash: o.programHash.replace(/^0x/, ''),
    runtime: o.runtime,
    steps: o.stepCount,
    ...(m !== 1 ? { rootEvery: m } : {}),
    stateRoots: roots,
    proofRoot,
    finalStateRoot: roots[roots.length - 1],
    checkpoints: [...o.checkpoints].sort((a, b) => a.step - b.step),
    ...(o.divergence != null ? { divergence: { entry: o.divergence.entry, flat: o.divergence.flat } } : {})
  }
}
