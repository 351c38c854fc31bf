// Stakes and balances over time, for the dashboard's charts: one sample per
// new best block the chain watch reads (it polls, so a sample may skip blocks
// in between). Bounded: a full history thins its older half, so the chart
// keeps covering the whole run at a coarser grain.

export interface AccountSample { free?: bigint, reserved?: bigint, stake?: bigint }
/** What is sampled of an account (the chain watch's AccountView) */
export interface SampledAccount { name: string, free?: bigint, reserved?: bigint, node?: { stake: bigint } | null }
export interface BalanceSample { block: number, time: number, accounts: Record<string, AccountSample> }

export const MAX_SAMPLES = 400

export class BalanceHistory {
  readonly samples: BalanceSample[] = []

  constructor (private readonly cap = MAX_SAMPLES) {
    if (!Number.isInteger(cap) || cap < 4) throw new Error('a balance history keeps at least 4 samples')
  }

  /** Records the accounts at `block`; false when that block (or a later one) is already recorded. */
  add (block: number, time: number, accounts: readonly SampledAccount[]): boolean {
    const last = this.samples[this.samples.length - 1]
    if (last != null && last.block >= block) return false
    const out: Record<string, AccountSample> = {}
    for (const a of accounts) out[a.name] = { free: a.free, reserved: a.reserved, stake: a.node?.stake }
    this.samples.push({ block, time, accounts: out })
    if (this.samples.length > this.cap) {
      const half = Math.floor(this.samples.length / 2)
      const kept = this.samples.filter((_, i) => i >= half || i % 2 === 0)
      this.samples.splice(0, this.samples.length, ...kept)
    }
    return true
  }
}
