import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { assembleServe } from '../../protocols/availability/index.js'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import { buildCheckpoint, manifestBytes, manifestHash } from '../../protocols/pol/checkpoint.js'
import type { CheckpointRef, ProofOfLearning } from '../../protocols/pol/proof.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { initLayout } from '../../protocols/program/init.js'
import { programHash, rootEveryOf, validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { proofFromChain, withheldRunCheckpoints } from '../../protocols/verification/chain-run.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { fastTensorRootUnder } from '../train/fast-commit.js'
import { checkpointDir } from '../train/store.js'
import { hex0x } from './ports-part.js'

// The verifier's run when the solver's run index or proof.json cannot be
// obtained: everything a replay needs beyond the dataset is read from the
// chain (protocols/verification/chain-run.ts). Until every checkpoint the
// sample needs (and 0) is served there, the answer is the list to challenge,
// all at once: a verifier served past challenge_end may challenge no more.

export type ChainRun =
  | { program: TaskProgram, proof: ProofOfLearning, served: Map<number, number>, written: Set<number> }
  | { unavailable: { step: number, reason: string, more?: number[] } }

/**
 * The program (from the task's submit_task extrinsic), the proof (the leaves of proof_root a serve
 * carried) and every checkpoint the sample needs (its served state, with a manifest of the
 * verifier's own) written into `runDir` as a run directory the engine replays and tapes from, or
 * the checkpoints still to challenge. `why`: why the published run could not be used.
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
  const phash = programHash(program)
  if (hex0x(phash) !== task.programHash) throw new Error(`the program on chain does not hash to task ${taskId}'s program hash`)
  if (rootEveryOf(program) !== m) throw new Error(`program of task ${taskId} commits roots every ${rootEveryOf(program)} steps, the chain's task every ${m}`)
  const names = initLayout(program).map(t => t.name)
  // the chain checked the serves under the task's state commitment, the program's
  const scheme = commitSchemeOf(program)
  const proofRoot = fromHex(task.proofRoot.replace(/^0x/, ''))
  let roots: Uint8Array[] = []
  const checkpoints: CheckpointRef[] = []
  for (const step of needed) {
    // each serve was checked by the chain leaf by leaf, and is again here; its first part carries every leaf of proof_root
    const ctx = { proofRoot, step, stepCount: task.stepCount, rootEvery: m, stateCommitment: scheme }
    const served1 = assembleServe(ctx, await chain.servedParts(served.get(step)!))
    if (roots.length === 0) roots = served1.roots
    if (served1.tensors.length !== names.length) throw new Error(`the state served for checkpoint ${step} has ${served1.tensors.length} tensors, the program's ${names.length}`)
    const { manifest, data } = buildCheckpoint(phash.replace(/^0x/, ''), step, names, served1.tensors, 'state.bin', { stateCommitment: scheme, tensorRoot: fastTensorRootUnder(scheme) })
    const dir = checkpointDir(runDir, step)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'state.bin'), data)
    writeFileSync(join(dir, 'manifest.json'), manifestBytes(manifest))
    checkpoints.push({ step, manifestHash: manifestHash(manifest) })
  }
  const proof = proofFromChain({
    programHash: phash, runtime: program.runtime, proofRoot: task.proofRoot, stepCount: task.stepCount,
    rootEvery: m, roots: roots.map(toHex), checkpoints, divergence: task.divergence
  })
  writeFileSync(join(runDir, 'task.json'), canonicalJson(program))
  writeFileSync(join(runDir, 'proof.json'), JSON.stringify(proof))
  return { program, proof, served, written: new Set(needed) }
}
