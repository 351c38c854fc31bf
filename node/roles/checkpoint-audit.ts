import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { rootAtStep, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { InitUnsupported } from '../../protocols/program/init.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { checkpointDir } from '../train/store.js'
import { stateFromCheckpoint } from './initial-state.js'

// When the replay meets a checkpoint that is not the committed state, the
// others the sample needs are checked in full before the verifier decides:
// the engine stops at the first bad one, and a solver publishing two bad
// checkpoints would otherwise be challenged for one, serve it, and leave the
// verifier to meet the second past the window, with no challenge left
// (docs/economics.md "Selective serving"). Only on this path: a good run's
// checkpoints are checked by the replay's roots alone.

/** Of `steps`, the checkpoints in `runDir` that are not the proof's committed state (read with the program's state layout). */
export function uncommittedCheckpoints (program: TaskProgram, runDir: string, proof: ProofOfLearning, steps: readonly number[]): number[] {
  const bad: number[] = []
  for (const step of steps) {
    let data: Buffer
    try {
      data = readFileSync(join(checkpointDir(runDir, step), 'state.bin'))
    } catch {
      bad.push(step)
      continue
    }
    try {
      if (typeof stateFromCheckpoint(program, data, rootAtStep(proof, step), step) === 'string') bad.push(step)
    } catch (e) {
      // a layout the node cannot compute without the engine: the engine finds the next one
      if (e instanceof InitUnsupported) return bad
      throw e
    }
  }
  return bad
}
