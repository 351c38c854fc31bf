import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { publishedCheckpointsError } from '../../protocols/verification/checkpoint-steps.js'
import { MAX_PROGRAM_FETCH_BYTES, MAX_RUN_INDEX_BYTES, proofMaxBytes } from '../../protocols/verification/fetch-limits.js'
import { runIndexCidOf, validateRunIndex, type RunIndex } from '../../protocols/verification/run-index.js'
import type { TaskInfo } from '../chain/client.js'
import type { ShardService } from '../shards/index.js'
import { hex0x } from './ports-part.js'

// The run a solver published (run index, program, proof), fetched within the honest size bounds
// and checked against what the chain holds; any mismatch throws, and the verifier then replays
// from the chain instead (verifier-chain-run.ts).

export interface PublishedRun { index: RunIndex, program: TaskProgram, proof: ProofOfLearning }

/**
 * Fetches the run index, the program (written to runDir/task.json) and proof.json of `task`, checked
 * against the chain; from the solver's peer first (`solverPeer`, who must serve them), then from
 * whoever the DHT names.
 */
export async function fetchPublishedRun (
  shards: ShardService, taskId: number, task: TaskInfo, m: number, runDir: string, signal: AbortSignal | undefined, solverPeer?: string
): Promise<PublishedRun> {
  const preferred = solverPeer !== undefined ? [solverPeer] : undefined
  // a solver that commits no run index withholds it from everyone
  const indexCid = runIndexCidOf(task)
  if (indexCid == null) throw new Error(`task ${taskId} has no run index committed`)
  const index = validateRunIndex(JSON.parse(new TextDecoder().decode(await shards.fetchBytes(indexCid, { maxBytes: MAX_RUN_INDEX_BYTES, signal, preferred }))))
  if (hex0x(index.proofRoot) !== task.proofRoot) throw new Error(`the run index names proof root ${index.proofRoot}, the chain has ${task.proofRoot}`)
  const programBytes = await shards.fetchBytes(index.program, { maxBytes: MAX_PROGRAM_FETCH_BYTES, signal, preferred })
  const { info: _i, ...p } = validateProgram(JSON.parse(new TextDecoder().decode(programBytes)))
  const program: TaskProgram = p
  if (hex0x(programHash(program)) !== task.programHash) throw new Error(`program of task ${taskId} does not match the chain's program hash`)
  if (rootEveryOf(program) !== m) throw new Error(`program of task ${taskId} commits roots every ${rootEveryOf(program)} steps, the chain's task every ${m}`)
  writeFileSync(join(runDir, 'task.json'), canonicalJson(program))
  await shards.fetchToFile(index.proof, join(runDir, 'proof.json'), { maxBytes: proofMaxBytes(task.steps, m), signal, preferred })
  // its spacing must be the program's: the chain's disputes prove leaves of that tree only
  const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')), m)
  if (hex0x(proof.proofRoot) !== task.proofRoot) throw new Error(`proof.json of task ${taskId} does not hash to the committed proof root`)
  if (proof.steps !== task.stepCount) throw new Error(`proof.json of task ${taskId} has ${proof.steps} steps, the task ${task.stepCount}`)
  if (proof.divergence !== undefined) {
    const div = proof.divergence
    // a diverged proof (a NaN ended the run): the chain holds the same divergence point
    if (task.divergence == null || task.divergence.entry !== div.entry || task.divergence.flat !== div.flat) throw new Error(`proof.json of task ${taskId} names another divergence point than the chain`)
    if (proof.steps >= task.steps || program.steps !== task.steps) throw new Error(`diverged proof of task ${taskId} covers ${proof.steps} of ${task.steps} steps`)
  } else if (proof.steps !== task.steps || program.steps !== task.steps) {
    // a truncated proof is never verified as if it were the task (the chain refuses it too: IncompleteProof)
    throw new Error(`proof of task ${taskId} covers ${proof.steps} of the program's ${program.steps} steps, the task asks for ${task.steps}`)
  }
  // replays load the listed checkpoints: only the task's own are ones the chain lets a verifier challenge
  const listed = publishedCheckpointsError(index.checkpoints.map(c => c.step), task) ?? publishedCheckpointsError(proof.checkpoints.map(c => c.step), task)
  if (listed !== undefined) throw new Error(listed)
  return { index, program, proof }
}
