import { existsSync } from 'node:fs'
import type { ChainClient, ChainEvent } from '../node/chain/client.js'
import { ControlClient } from '../node/control/client.js'
import type { WorkProgress } from '../node/roles/work-progress.js'
import type { ProgressItem } from './progress.js'
import { committedStep, segmentCount } from '../protocols/pol/segments.js'

// The devnet's scenario: follow one task from submission to settlement on
// the chain, show progress (training, verification, disputes) and report
// what happened: accuracy, payouts and slashes, time per phase.

export const FASHION_DIR = '/usr/share/datasets/fashion-mnist'

export function fashionAvailable (dir = FASHION_DIR): boolean {
  return existsSync(`${dir}/train-images-idx3-ubyte.gz`) || existsSync(`${dir}/train-images-idx3-ubyte`)
}

export interface PeerRef { name: string, role: string, dataDir: string, account: string, accountId: string }

export interface PhaseTimes {
  submitted?: number
  solverSelected?: number
  proofCommitted?: number
  firstVerdict?: number
  disputeOpened?: number
  disputeResolved?: number
  settled?: number
}

export interface Summary {
  taskId: number
  success: boolean
  accuracy?: number
  phases: Record<string, number>
  payouts: Array<{ who: string, delta: string, reason: string }>
  events: string[]
  disputes: Array<{ disputeId: number, winner: string, loser: string, how: string, slashed: string, forcedError: boolean }>
}

/** Vec<u8> event fields arrive as 0x-hex */
function utf8 (v: unknown): string {
  const s = String(v)
  return /^0x[0-9a-f]*$/i.test(s) ? Buffer.from(s.slice(2), 'hex').toString('utf8') : s
}

const UNIT = 10n ** 12n
export function units (planck: bigint | string | number): string {
  const p = BigInt(planck)
  const sign = p < 0n ? '-' : ''
  const a = p < 0n ? -p : p
  return `${sign}${a / UNIT}.${String((a % UNIT) / 10n ** 10n).padStart(2, '0')}`
}

export class ScenarioWatcher {
  readonly times: PhaseTimes = {}
  readonly log: string[] = []
  readonly disputes: Summary['disputes'] = []
  /** the Truebit forced step, once the solver revealed it (it is private until then) */
  forcedStep?: number
  /** the block the proof was committed in, and the challenge window's last block */
  committedAt?: number
  challengeEnd?: number
  private readonly disputedStep = new Map<number, number>()
  private settled?: { success: boolean }
  private readonly waiters: Array<() => void> = []
  private readonly names: Map<string, string>

  constructor (
    private readonly chain: ChainClient, private readonly peers: PeerRef[],
    private readonly taskId: () => number | undefined,
    private readonly say: (m: string, d?: Record<string, unknown>) => void,
    /** the task's state-root spacing: at m > 1 a dispute names a segment (docs/disputes.md "Segments") */
    private readonly spacing: { rootEvery: number, steps: number } = { rootEvery: 1, steps: 0 }
  ) {
    this.names = new Map(peers.map(p => [p.accountId, p.name]))
  }

  /** what open_dispute's disputed_step names: a step, or at m > 1 a segment (one past the last: a diverged proof's last step) */
  private disputedWhat (unit: number): string {
    const { rootEvery: m, steps } = this.spacing
    if (m <= 1) return `at step ${unit}`
    if (unit >= segmentCount(steps, m)) return `at the diverged step (unit ${unit})`
    return `at segment ${unit} (steps ${committedStep(unit, steps, m) + 1}–${committedStep(unit + 1, steps, m)})`
  }

  name (account: unknown): string {
    return this.names.get(String(account)) ?? String(account).slice(0, 10) + '…'
  }

  async start (): Promise<() => void> {
    return await this.chain.onEvents(e => this.onEvent(e))
  }

  private onEvent (e: ChainEvent): void {
    if (e.section !== 'arbitration') return
    const d = e.data as Record<string, unknown>
    const id = this.taskId()
    if (d.taskId != null && id != null && Number(d.taskId) !== id) return
    const now = Date.now()
    const line = (m: string): void => { this.log.push(`#${e.blockNumber} ${m}`); this.say(m, { event: e.method, block: e.blockNumber }) }
    switch (e.method) {
      case 'TaskSubmitted': this.times.submitted ??= now; line(`task ${String(d.taskId)} submitted on chain, escrow ${units(d.escrow as bigint)}`); break
      case 'SolverSelected': this.times.solverSelected ??= now; line(`solver selected: ${this.name(d.solver)} (deadline block ${String(d.deadline)})`); break
      case 'SolverTimedOut': line(`solver ${this.name(d.solver)} missed its deadline: slashed ${units(d.slashed as bigint)}, another solver is selected`); break
      case 'ProofCommitted': this.times.proofCommitted ??= now; this.committedAt = e.blockNumber; this.challengeEnd = Number(d.challengeEnd); line(`proof committed by ${this.name(d.solver)}: root ${String(d.proofRoot).slice(0, 18)}…, challenge window ends at block ${String(d.challengeEnd)}`); break
      case 'VerifiersAssigned': line(`verifiers drawn by the chain (round ${String(d.round)}, from the hash of block ${String(d.seedBlock)}): ${((d.verifiers as unknown[] | undefined) ?? []).map(v => this.name(v)).join(', ') || 'none eligible'}; verdicts due by block ${String(d.deadline)}`); break
      case 'AssignmentLapsed': line(`assigned verifier ${this.name(d.verifier)} failed its slot (silent, a reject without evidence, or a lost dispute): penalty ${units(d.penalty as bigint)}, replaced`); break
      case 'AssignmentReleased': line(`assigned verifier ${this.name(d.verifier)}'s verdict did not stand: replaced (no penalty: its accept was already slashed, or its availability challenge was answered)`); break
      case 'VerdictSubmitted': this.times.firstVerdict ??= now; line(`verdict from ${this.name(d.verifier)}: ${d.accept === true ? 'accept' : 'REJECT'}`); break
      case 'DisputeOpened': this.times.disputeOpened ??= now; this.disputedStep.set(Number(d.disputeId), Number(d.disputedStep)); line(`dispute ${String(d.disputeId)} opened by ${this.name(d.challenger)} against ${this.name(d.defender)} ${this.disputedWhat(Number(d.disputedStep))}`); break
      case 'MoveForced': line(`dispute ${String(d.disputeId)}: ${this.name(d.by)} forced a move on chain (message ${String(d.seq)} due at block ${String(d.due)})`); break
      case 'MoveAnswered': line(`dispute ${String(d.disputeId)}: ${this.name(d.by)} answered the forced move on chain`); break
      case 'Adjudicated': line(`dispute ${String(d.disputeId)} adjudicated on chain (${utf8(d.kind)} claim): ${utf8(d.reason)}`); break
      case 'DisputeResolved':
        this.times.disputeResolved ??= now
        this.disputes.push({
          disputeId: Number(d.disputeId), winner: this.name(d.winner), loser: this.name(d.loser), how: String(d.how),
          slashed: units(d.slashed as bigint), forcedError: d.forcedError === true
        })
        line(`dispute ${String(d.disputeId)} resolved (${String(d.how)}): ${this.name(d.winner)} wins, ${this.name(d.loser)} loses ${units(d.slashed as bigint)}${d.forcedError === true ? ' (a forced error: no slash for the solver)' : ''}`)
        break
      case 'Slashed': line(`slashed ${this.name(d.who)}: ${units(d.amount as bigint)} (${units(d.toWinner as bigint)} to the winner, ${units(d.toTreasury as bigint)} to the treasury)`); break
      case 'JackpotPaid': line(`jackpot share paid to ${this.name(d.who)} (dispute ${String(d.disputeId)}), out of the solver's reward: ${units(d.amount as bigint)}`); break
      case 'VerificationExtended': this.challengeEnd = Number(d.challengeEnd); line(`challenge window over with ${String(d.standing)} standing verdict(s), fewer than the task asks: extended to block ${String(d.challengeEnd)}`); break
      // the forced step is private to the solver until it proves it after a ruling
      case 'ForcedErrorRevealed':
        this.forcedStep ??= Number(d.step)
        for (const x of this.disputes) if (((d.excused as unknown[] | undefined) ?? []).some(id => Number(id) === x.disputeId)) x.forcedError = true
        line(`${this.name(d.solver)} revealed its VRF: step ${String(d.step)} was one of its Truebit forced errors (no slash; at settlement the jackpot comes out of its reward, split across its forced errors, each part to the drawn verifiers that caught it or else to the treasury)`)
        break
      case 'DrawRequested': line(`task ${String(d.taskId)} verified: before paying, the chain asks the solver to reveal its forced-error draw by block ${String(d.deadline)}`); break
      case 'DrawRevealed': {
        const steps = ((d.forcedSteps as unknown[] | undefined) ?? []).map(Number)
        line(`${this.name(d.solver)} revealed its draw: ${steps.length === 0 ? 'no forced error, paid in full' : `forced errors at step${steps.length > 1 ? 's' : ''} ${steps.join(', ')}, the jackpot comes out of its reward`}`)
        break
      }
      case 'JackpotForfeited': line(`jackpot ${units(d.amount as bigint)} out of the solver's reward to the treasury: its draw ordered forced errors (or it did not reveal it) and no drawn verifier won these parts`); break
      case 'SolverPenalized': line(`no forced-error reveal for dispute ${String(d.disputeId)}: the solver is slashed ${units(d.slashed as bigint)}`); break
      case 'VerdictSlashed': line(`verifier ${this.name(d.verifier)} accepted step ${String(d.step)}, ruled wrong: slashed ${units(d.slashed as bigint)}`); break
      case 'TaskSettled':
        this.times.settled ??= now
        this.settled = { success: d.success === true }
        line(`task settled (${d.success === true ? 'success' : 'failed'}): solver paid ${units(d.solverPaid as bigint)}, verifiers paid ${units(d.verifiersPaid as bigint)}, refunded ${units(d.refunded as bigint)}`)
        for (const w of this.waiters.splice(0)) w()
        break
      case 'TaskUnverified':
        this.times.settled ??= now
        this.settled = { success: false }
        line(`task UNVERIFIED: only ${String(d.standing)} verdict(s) stood after every extension; the solver is not paid, ${units(d.refunded as bigint)} refunded to the submitter`)
        for (const w of this.waiters.splice(0)) w()
        break
      case 'CapacityRentPaid': line(`capacity rent: ${this.name(d.who)} paid ${units(d.amount as bigint)} to the treasury for the verifier stake the task held bound`); break
      case 'AwaitingVerifierStake': line(`no solver yet: only ${String(d.verifiers)} verifier(s) have ${units(d.needed as bigint)} of free stake to answer for the task (bond + reward); waiting`); break
      case 'TaskExpired':
        this.times.settled ??= now
        this.settled = { success: false }
        line(`task EXPIRED: nobody took it in time; ${units(d.refunded as bigint)} refunded to the submitter`)
        for (const w of this.waiters.splice(0)) w()
        break
      case 'TaskFaulted':
        this.times.settled ??= now
        this.settled = { success: false }
        line(`task FAULTED: the chain's block hook failed on it and quarantined it; ${units(d.refunded as bigint)} refunded to the submitter, nobody paid or slashed`)
        for (const w of this.waiters.splice(0)) w()
        break
    }
  }

  async waitSettled (timeoutMs: number): Promise<{ success: boolean }> {
    if (this.settled != null) return this.settled
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the task did not settle within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs)
      this.waiters.push(() => { clearTimeout(t); resolve() })
    })
    return this.settled!
  }

  get isSettled (): boolean { return this.settled != null }
}

/** One peer's work on the task as a progress item (training, coding and publishing, verifying). */
export function progressItem (name: string, w: WorkProgress): ProgressItem {
  if (w.phase === 'training') {
    const fraction = (w.step ?? 0) / Math.max(1, w.steps ?? 1)
    return { label: `${name} training`, fraction, etaSec: w.etaSec, text: `training step ${w.step ?? 0}/${w.steps ?? '?'} (${Math.round(100 * fraction)}%), loss ${w.loss?.toFixed(4) ?? '?'}, ${w.samplesPerSec ?? '?'} samples/s, ETA ${w.etaSec ?? '?'} s` }
  }
  const of = /(\d+)\/(\d+)/.exec(w.detail ?? '')
  const fraction = of != null ? Number(of[1]) / Math.max(1, Number(of[2])) : undefined
  if (w.phase === 'verifying') return { label: `${name} verifying`, fraction, text: `verifying: interval ${(w.step ?? 0) + 1}/${w.steps ?? '?'}, ${w.detail ?? ''}` }
  return { label: `${name} ${w.phase}`, fraction: w.phase === 'publishing' ? fraction : undefined, text: `${w.phase}${w.detail != null ? `: ${w.detail}` : ''}` }
}

/**
 * Follows the peers' work on the task (training, erasure coding and
 * publishing, verification) every `everyMs`; `report` gets each item whose
 * text changed, `done` a peer whose work on the task is over.
 */
export function watchProgress (
  peers: PeerRef[], taskId: () => number | undefined,
  report: (key: string, item: ProgressItem, w: WorkProgress) => void, done: (key: string) => void, everyMs = 1000
): () => void {
  const last = new Map<string, string>()
  const timer = setInterval(() => {
    const id = taskId()
    if (id == null) return
    void Promise.all(peers.filter(p => p.role === 'solver' || p.role === 'verifier' || p.role === 'whistleblower').map(async p => {
      try {
        const c = await ControlClient.fromDataDir(p.dataDir)
        const all = await c.get<WorkProgress[]>('/v1/progress')
        const w = all.find(x => x.taskId === id)
        if (w == null) return
        const item = progressItem(p.name, w)
        if (last.get(p.name) === item.text) return
        last.set(p.name, item.text)
        if (w.phase === 'done' || w.phase === 'failed') done(p.name)
        report(p.name, item, w)
      } catch { /* a peer may be restarting */ }
    }))
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}

/** The challenge window's countdown, from the chain's head once the proof is committed (until settlement). */
export function watchWindow (
  chain: ChainClient, watcher: ScenarioWatcher, blockTimeMs: number,
  report: (item: ProgressItem | undefined, data: Record<string, unknown>) => void, everyMs = 1000
): () => void {
  let lastText = ''
  const timer = setInterval(() => {
    const end = watcher.challengeEnd
    const from = watcher.committedAt
    if (end == null || from == null) return
    if (watcher.isSettled) { report(undefined, {}); clearInterval(timer); return }
    void chain.bestNumber().then(best => {
      const left = Math.max(0, end - best)
      const item: ProgressItem = { label: 'challenge window', fraction: (best - from) / Math.max(1, end - from), etaSec: left * blockTimeMs / 1000, text: `block ${best} of ${end}: ${left} block(s) (~${Math.round(left * blockTimeMs / 1000)} s) left` }
      if (item.text === lastText || watcher.isSettled) return
      lastText = item.text
      report(item, { block: best, challengeEnd: end, blocksLeft: left })
    }).catch(() => {})
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
