import { isIP } from 'node:net'

// The devnet command's options, and their bounds (a bad one exits with code 2).

export const DEFAULT_ROLES = ['submitter', 'solver', 'solver', 'verifier', 'verifier', 'whistleblower']

export interface Opts {
  peers: number
  dir: string
  keep?: boolean
  exitAfter?: number
  exitWhenSettled?: boolean
  json?: boolean
  dashboardPort: number
  task?: string
  steps?: number
  checkpointEvery?: number
  rootEvery?: number
  blockTime: number
  forcedError: boolean
  challengeWindow?: number
  disputeClock: number
  synthetic?: boolean
  public?: string
}

export function checkOptions (o: Opts): void {
  for (const [flag, v, lo, hi] of [['--peers', o.peers, 3, 64], ['--steps', o.steps, 1, 500_000], ['--checkpoint-every', o.checkpointEvery, 1, 500_000], ['--root-every', o.rootEvery, 1, 64], ['--block-time', o.blockTime, 50, 60_000], ['--challenge-window', o.challengeWindow, 10, 100_000], ['--dispute-clock', o.disputeClock, 5, 100_000], ['--dashboard-port', o.dashboardPort, 0, 65535]] as const) {
    if (v === undefined) continue
    if (!Number.isInteger(v) || v < lo || v > hi) { process.stderr.write(`${flag} must be an integer in [${lo}, ${hi}], got ${v}\n`); process.exit(2) }
  }
  if (o.public != null && !isIP(o.public)) { process.stderr.write(`--public must be an IP address of this host, got "${o.public}"\n`); process.exit(2) }
}
