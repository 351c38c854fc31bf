import { toHex } from '../../protocols/commit/merkle.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { isCommittedStep, leafOfStep } from '../../protocols/pol/segments.js'
import type { BackendLog } from './backend.js'
import { listCheckpoints, readCheckpoint, readRoots } from './store.js'

// Where a resumed run starts: the latest checkpoint whose root state-roots.bin
// holds. A crash after a checkpoint was written but before its roots were
// resumes from the one before. state-roots.bin holds leaf j's root at j × 32
// (the state after step min(j·m, steps); step j at m = 1).

export interface ResumePoint {
  /** the step of the checkpoint the run resumes from */
  c: number
  ck: ReturnType<typeof readCheckpoint>
  /** every checkpoint on disk of a committed step within the program's steps, ascending */
  listed: number[]
  /** the roots in state-roots.bin, by leaf */
  prevRoots: Uint8Array[]
}

/** undefined: nothing to resume from (no checkpoints); throws if checkpoints exist but none agrees with the roots. */
export function findResumePoint (outDir: string, steps: number, phash: string, log: BackendLog, rootEvery = 1, scheme: CommitScheme = 'rowcol'): ResumePoint | undefined {
  const leaf = (s: number): number => leafOfStep(s, steps, rootEvery)
  const listed = listCheckpoints(outDir).filter(s => isCommittedStep(s, steps, rootEvery))
  const prevRoots = listed.length > 0 ? readRoots(outDir) : []
  const usable = listed.filter(s => leaf(s) < prevRoots.length)
  let start: { c: number, ck: ReturnType<typeof readCheckpoint> } | undefined
  for (let i = usable.length - 1; i >= 0 && start === undefined; i--) {
    let ck: ReturnType<typeof readCheckpoint>
    try {
      ck = readCheckpoint(outDir, usable[i], { programHash: phash }, { stateCommitment: scheme })
    } catch (e) {
      // e.g. a checkpoint cut short by the crash
      log.warn(`--resume: checkpoint ${usable[i]} is unusable (${(e as Error).message}); trying an earlier one`)
      continue
    }
    if (toHex(prevRoots[leaf(usable[i])]) === ck.manifest.stateRoot) start = { c: usable[i], ck }
    else log.warn(`--resume: state-roots.bin does not agree with checkpoint ${usable[i]}; trying an earlier one`)
  }
  if (listed.length > 0 && start === undefined) throw new Error(`--resume: state-roots.bin does not agree with any checkpoint (${listed.join(', ')})`)
  return start === undefined ? undefined : { ...start, listed, prevRoots }
}
