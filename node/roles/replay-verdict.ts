import type { VerifyResult } from '../../actors/ports.js'
import type { ReplayResult } from '../train/replay-many.js'

// What a verifier's replay of its sample says (node/train/replay-many.ts
// results, in step order). A NaN or a mismatch ends it. A Truebit forced
// error in the sample (a marked leaf: protocols/dispute/forced-leaf.ts) does
// not: it is kept, to be disputed for its part of the jackpot, and the rest
// of the sample is still checked: a task may hold several forced errors,
// each paid on its own, and a cheat hidden after one (before the next
// checkpoint, which is honest) is disputed too.

export interface ReplayReading {
  /** the sampled steps (segment ends) replayed before the first bad one, the forced ones included */
  checked: number[]
  /** the forced errors' steps the sample holds, in step order */
  forced: number[]
  /** the first real bad step: a mismatch or a NaN */
  bad?: number
  /** the bad step is a NaN in a committed state or op output */
  nan?: boolean
}

export function readReplay (results: readonly ReplayResult[]): ReplayReading {
  const checked: number[] = []
  const forced: number[] = []
  for (const r of results) {
    // the replay met a NaN in a committed step: the run should have ended there (docs/disputes.md, "NaN")
    if (r.nanStep != null && r.nanStep <= (r.firstMismatch ?? r.step)) return { checked, forced, bad: r.nanStep, nan: true }
    if (r.forcedStep != null && r.firstMismatch == null) {
      forced.push(r.forcedStep)
      checked.push(r.step)
      continue
    }
    if (!r.match || r.firstMismatch != null) return { checked, forced, bad: r.firstMismatch ?? r.step }
    checked.push(r.step)
  }
  return { checked, forced }
}

/** The verdict: reject at the first forced error (its dispute backs the reject); every forced error and a later bad step are disputed; else accept. */
export function verdictOf (r: ReplayReading): VerifyResult {
  const { checked, forced, bad } = r
  if (bad !== undefined) {
    const checkedSteps = [...checked.filter(s => s < bad), bad]
    return forced.length === 0
      ? { accept: false, checkedSteps, firstBadStep: bad }
      : { accept: false, checkedSteps, firstBadStep: forced[0], forcedSteps: forced, laterBadStep: bad }
  }
  if (forced.length > 0) return { accept: false, checkedSteps: checked, firstBadStep: forced[0], forcedSteps: forced }
  return { accept: true, checkedSteps: checked }
}
