import { describe, expect, it } from 'vitest'
import { disputeFindings } from '../../../actors/roles/disputes.js'
import type { DisputeResult } from '../../../actors/ports.js'

// What a verifier or whistleblower disputes after its replay: every forced
// error its sample holds (each paid on its own) and a real mismatch after them.

function ports (): { opened: Array<number | undefined>, challenge: (t: number, a: 'solver' | 'verifier', s: number | undefined) => Promise<DisputeResult> } {
  const opened: Array<number | undefined> = []
  return {
    opened,
    challenge: async (_t, _a, s) => { opened.push(s); return { disputeId: opened.length - 1, winner: 'challenger', reason: `step ${String(s)}` } }
  }
}

describe('disputeFindings (actors/roles/disputes.ts)', () => {
  it('disputes one bad step alone', async () => {
    const p = ports()
    expect(await disputeFindings(p, 0, 'solver', { firstBadStep: 7 })).toEqual({ disputeId: 0, winner: 'challenger', reason: 'step 7' })
    expect(p.opened).toEqual([7])
  })

  it('disputes every forced error of the sample, not only the first', async () => {
    const p = ports()
    const r = await disputeFindings(p, 0, 'solver', { firstBadStep: 2, forcedSteps: [2, 4, 9] })
    expect(p.opened.sort((a, b) => a! - b!)).toEqual([2, 4, 9])
    expect(r.reason).toMatch(/^step 2 \(and dispute \d of the forced error at step 4: challenger won; dispute \d of the forced error at step 9: challenger won\)$/)
  })

  it('and a real mismatch after them, reported as the result', async () => {
    const p = ports()
    const r = await disputeFindings(p, 0, 'verifier', { firstBadStep: 2, forcedSteps: [2, 4], laterBadStep: 6 })
    expect(p.opened.sort((a, b) => a! - b!)).toEqual([2, 4, 6])
    expect(r.reason).toMatch(/^step 6 \(and dispute \d of the forced error at step 2: challenger won; dispute \d of the forced error at step 4/)
  })
})
