import type { VerifyResult } from '../../actors/ports.js'
import type { ReplayResult } from '../train/replay-many.js'

// What a verifier's replay of its sample says (node/train/replay-many.ts
// results, in step order). A NaN or a mismatch ends it. A Truebit forced
// error in the sample (a marked leaf: protocols/dispute/forced-leaf.ts) does
// not: it is kept, to be disputed for the jackpot, and the rest of the
// sample is still checked, so a cheat hidden after it (before the next
// checkpoint, which is honest) is disputed too.

export interface ReplayReading {
  /** the sampled steps (segment ends) replayed before the first bad one, the forced one included */
  checked: number[]
  /** the forced error's step, if the sample holds it */
  forced?: number
  /** the first real bad step: a mismatch or a NaN */
  bad?: number
  /** the bad step is a NaN in a committed state or op output */
  nan?: boolean
}

export function readReplay (results: readonly ReplayResult[]): ReplayReading {
  const checked: number[] = []
  let forced: number | undefined
  for (const r of results) {
    // the replay met a NaN in a committed step: the run should have ended there (docs/disputes.md, "NaN")
    if (r.nanStep != null && r.nanStep <= (r.firstMismatch ?? r.step)) return { checked, forced, bad: r.nanStep, nan: true }
    if (r.forcedStep != null && r.firstMismatch == null) {
      forced ??= r.forcedStep
      checked.push(r.step)
      continue
    }
    if (!r.match || r.firstMismatch != null) return { checked, forced, bad: r.firstMismatch ?? r.step }
    checked.push(r.step)
  }
  return { checked, forced }
}

/** The verdict: reject at the forced error (its dispute backs the reject) and at a later bad step, both disputed; else accept. */
export function verdictOf (r: ReplayReading): VerifyResult {
  const { checked, forced, bad } = r
  if (bad !== undefined) {
    const checkedSteps = [...checked.filter(s => s < bad), bad]
    return forced === undefined
      ? { accept: false, checkedSteps, firstBadStep: bad }
      : { accept: false, checkedSteps, firstBadStep: forced, forcedStep: forced, laterBadStep: bad }
  }
  if (forced !== undefined) return { accept: false, checkedSteps: checked, firstBadStep: forced, forcedStep: forced }
  return { accept: true, checkedSteps: checked }
}
