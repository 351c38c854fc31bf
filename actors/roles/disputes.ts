import type { DisputeResult, RolePorts, VerifyResult } from '../ports.js'

// The disputes a replay's findings call for: every Truebit forced error in the
// sample (each is paid on its own: a drawn verifier's part of the jackpot;
// for a whistleblower, its dispute makes the solver reveal, which slashes the
// blind accepts) and a real mismatch after them, side by side. The result
// reported is the real cheat's, else the first forced error's.

export async function disputeFindings (
  ports: Pick<RolePorts, 'challenge'>, taskId: number, against: 'solver' | 'verifier',
  found: Pick<VerifyResult, 'firstBadStep' | 'forcedSteps' | 'laterBadStep'> | undefined
): Promise<DisputeResult> {
  const forced = found?.forcedSteps ?? []
  const later = found?.laterBadStep
  if (forced.length === 0 && later === undefined) return await ports.challenge(taskId, against, found?.firstBadStep)
  const steps = forced.length > 0 ? forced : [found?.firstBadStep]
  const [forcedResults, laterResult] = await Promise.all([
    Promise.all(steps.map(async s => await ports.challenge(taskId, against, s))),
    later === undefined ? undefined : ports.challenge(taskId, against, later)
  ])
  const main = laterResult ?? forcedResults[0]
  const others = forcedResults
    .map((r, i) => ({ r, step: steps[i] }))
    .filter(x => x.r !== main)
    .map(x => `dispute ${x.r.disputeId} of the forced error at step ${String(x.step)}: ${x.r.winner} won`)
  return others.length === 0 ? main : { ...main, reason: `${main.reason ?? ''} (and ${others.join('; ')})` }
}
