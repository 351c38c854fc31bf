import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { assembleServe } from '../../protocols/availability/index.js'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import type { ProofOfLearning } from '../../protocols/pol/proof.js'
import { proofFromChain, withheldRunCheckpoints } from '../../protocols/verification/chain-run.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import { hex0x } from './ports-part.js'

// The verifier's run when the solver's run index or proof.json cannot be
// obtained: everything a replay needs beyond the dataset is read from the
// chain (protocols/verification/chain-run.ts). Until every checkpoint the
// sample needs (and 0) is served there, the answer is the list to challenge,
// all at once: a verifier served past challenge_end may challenge no more.

export type ChainRun =
  | { program: TaskProgram, proof: ProofOfLearning, served: Map<number, number> }
  | { unavailable: { step: number, reason: string, more?: number[] } }

/**
 * The program (from the task's submit_task extrinsic) and the proof (the leaves of proof_root a serve
 * carried) written into `runDir` as task.json and proof.json, or the checkpoints still to challenge.
 * `why`: why the published run could not be used.
 */
export async function runFromChain (
  chain: ChainClient, taskId: number, task: TaskInfo, m: number, sampled: readonly number[], runDir: string, why: string
): Promise<ChainRun> {
  const needed = withheldRunCheckpoints(sampled, { stepCount: task.stepCount, checkpointEvery: task.checkpointEvery, diverged: task.divergence != null }, m)
  const served = await chain.servedCheckpoints(taskId)
  const missing = needed.filter(s => !served.has(s))
  if (missing.length > 0) {
    const [step, ...more] = missing
    return { unavailable: { step, reason: `${why}; replaying from the chain needs checkpoints ${needed.join(', ')} served there`, ...(more.length > 0 ? { more } : {}) } }
  }
  const bytes = await chain.taskProgram(taskId)
  if (bytes == null) throw new Error(`task ${taskId}: its submit_task extrinsic is not in block ${task.createdAt}`)
  const { info: _i, ...program } = validateProgram(JSON.parse(new TextDecoder().decode(bytes)))
  if (hex0x(programHash(program)) !== task.programHash) throw new Error(`the program on chain does not hash to task ${taskId}'s program hash`)
  if (rootEveryOf(program) !== m) throw new Error(`program of task ${taskId} commits roots every ${rootEveryOf(program)} steps, the chain's task every ${m}`)
  // any serve's first part carries every leaf of proof_root, checked by the chain and again here
  const parts = await chain.servedParts(served.get(needed[0])!)
  const { roots } = assembleServe({ proofRoot: fromHex(task.proofRoot.replace(/^0x/, '')), step: needed[0], stepCount: task.stepCount, rootEvery: m }, parts)
  const proof = proofFromChain({
    programHash: task.programHash, runtime: program.runtime, proofRoot: task.proofRoot, stepCount: task.stepCount,
    checkpointEvery: task.checkpointEvery, rootEvery: m, roots: roots.map(toHex), divergence: task.divergence
  })
  writeFileSync(join(runDir, 'task.json'), canonicalJson(program))
  writeFileSync(join(runDir, 'proof.json'), JSON.stringify(proof))
  return { program, proof, served }
}
