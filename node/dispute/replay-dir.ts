import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { checkpointDataFile, manifestHash, type CheckpointManifest } from '../../protocols/pol/checkpoint.js'
import { runIndexCidOf, validateRunIndex, type RunIndex } from '../../protocols/verification/run-index.js'
import { MAX_CHECKPOINT_MANIFEST_BYTES, MAX_PROGRAM_FETCH_BYTES, MAX_RUN_INDEX_BYTES, checkpointMaxBytes, proofMaxBytes } from '../../protocols/verification/fetch-limits.js'
import { publishedCheckpointsError } from '../../protocols/verification/checkpoint-steps.js'
import type { TaskInfo } from '../chain/client.js'
import type { ShardService } from '../shards/index.js'
import { checkpointDir } from '../train/store.js'

// What a challenger needs on disk before it can tape a disputed step.

/**
 * The challenger's replay directory: task.json, proof.json and the checkpoint before `step`
 * (every download ends with `signal`)
 * (fetched via the run index when missing; checkpoints from the solver, `solverPeer`, as they
 * have no DHT provider records). With the run index withheld, the directory the verifier
 * rebuilt from the chain (node/roles/verifier-chain-run.ts: the program, the served roots and
 * checkpoints with manifests of its own) is used as it is.
 */
export async function ensureReplayDir (
  shards: ShardService, taskId: number, task: TaskInfo, runDir: string, step: number, solverPeer: string, signal?: AbortSignal
): Promise<{ program: TaskProgram, proof: ProofOfLearning }> {
  mkdirSync(runDir, { recursive: true })
  let index: RunIndex | undefined
  try {
    const indexCid = runIndexCidOf(task)
    if (indexCid == null) throw new Error(`task ${taskId} has no run index committed`)
    const bytes = await shards.fetchBytes(indexCid, { maxBytes: MAX_RUN_INDEX_BYTES, signal, preferred: [solverPeer] })
    index = validateRunIndex(JSON.parse(new TextDecoder().decode(bytes)))
    // a run listing other checkpoints than the task's is replayed from the chain (the verifier's rebuilt directory)
    const listed = publishedCheckpointsError(index.checkpoints.map(c => c.step), task)
    if (listed !== undefined) { index = undefined; throw new Error(listed) }
  } catch (err) {
    if (!existsSync(join(runDir, 'task.json')) || !existsSync(join(runDir, 'proof.json'))) throw err
  }
  // each refused unfetched when it declares more than it can be (a root every step is the largest proof)
  if (index !== undefined && !existsSync(join(runDir, 'task.json'))) await shards.fetchToFile(index.program, join(runDir, 'task.json'), { maxBytes: MAX_PROGRAM_FETCH_BYTES, signal, preferred: [solverPeer] })
  if (index !== undefined && !existsSync(join(runDir, 'proof.json'))) await shards.fetchToFile(index.proof, join(runDir, 'proof.json'), { maxBytes: proofMaxBytes(task.steps, 1), signal, preferred: [solverPeer] })
  const { info: _i, ...program } = validateProgram(JSON.parse(readFileSync(join(runDir, 'task.json'), 'utf8')))
  const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
  if ('0x' + proof.proofRoot.replace(/^0x/, '') !== task.proofRoot) throw new Error(`proof.json of task ${taskId} is not the committed proof`)
  if (index === undefined) {
    const ref = proof.checkpoints.filter(c => c.step <= step - 1).pop()
    if (ref == null || !existsSync(join(checkpointDir(runDir, ref.step), 'manifest.json'))) throw new Error(`no checkpoint before step ${step}: the run index is withheld and none was served on chain`)
    return { program, proof }
  }
  const ck = index.checkpoints.filter(c => c.step <= step - 1).pop()
  if (ck == null) throw new Error(`no checkpoint before step ${step}`)
  const dir = checkpointDir(runDir, ck.step)
  // a manifest of the verifier's own (written from a serve while the run index was withheld) is not the solver's
  const ref = proof.checkpoints.find(c => c.step === ck.step)
  const ours = (): boolean => ref !== undefined && manifestHash(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as CheckpointManifest) !== ref.manifestHash
  if (!existsSync(join(dir, 'manifest.json')) || ours()) {
    mkdirSync(dir, { recursive: true })
    await shards.fetchToFile(ck.manifest, join(dir, 'manifest.json'), { providers: [solverPeer], maxBytes: MAX_CHECKPOINT_MANIFEST_BYTES, signal })
    // the solver names the data file: a plain name in this directory, never a path
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { dataFile?: unknown }
    await shards.fetchToFile(ck.data, join(dir, checkpointDataFile(manifest)), { providers: [solverPeer], maxBytes: checkpointMaxBytes(program), signal })
  }
  return { program, proof }
}
