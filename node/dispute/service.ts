import type { DisputeResult } from '../../actors/ports.js'
import { encodeClaim, type Claim } from '../../protocols/dispute/index.js'
import { rootEveryOfProof } from '../../protocols/pol/proof.js'
import type { ChainClient, DisputeInfo } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import { runEngineJob } from '../engine/engine.js'
import type { TapeJob } from '../engine/protocol.js'
import type { ShardService } from '../shards/index.js'
import { Challenger } from './challenger.js'
import type { DisputeRecord } from './dispute-record.js'
import { Defender } from './defender.js'
import type { NodeFaults } from './faults.js'
import { forcedErrorDraw } from './forced-error.js'
import { revealProofFromTape } from './forced-reveal.js'
import { readTapeFile, type TapeFile } from '../engine/tape-file.js'
import { datasetDirForRun } from '../train/store.js'
import { serve } from './transport.js'

// The node side of a dispute (docs/disputes.md): the challenger (challenger.ts)
// tapes the disputed step in a child process, opens the dispute on chain, finds
// the defender's peer id on chain and plays the pure ChallengerGame over
// /proofswarm/dispute/3.0.0; the defender (defender.ts) tapes its own step
// (with the faults its training had) and answers with the pure DefenderGame.
// Moves stay off chain; a party left without an answer for `forceAfterMs`
// forces its pending move on chain (force_move), a party forced answers there
// (answer_move); the final claim goes through adjudicate; a force left
// unanswered past its due block is ended with claim_timeout.

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

export interface DisputeServiceInit {
  peer: Peer
  chain: () => Promise<ChainClient>
  shards: ShardService
  faults: NodeFaults
  datasetDir?: string
  /** how long a whole dispute may take before the node gives up waiting (default 15 min) */
  maxDisputeMs?: number
  /** how long a party waits for an answer off chain before forcing its move on chain (default 20 s) */
  forceAfterMs?: number
}

export type { DisputeRecord } from './dispute-record.js'

export class DisputeService {
  private readonly log: Logger
  private readonly defender: Defender
  private readonly challenger: Challenger
  /** dispute id → how this node ended it (for DisputeResult.reason) */
  private readonly endings = new Map<number, string>()
  /** figures of finished disputes (wall time, moves), for benchmarks and status */
  readonly finished: DisputeRecord[] = []
  /** disputes this node challenges now, with the narrowing so far (the dashboard shows each move as it is made) */
  readonly ongoing = new Map<number, DisputeRecord>()

  constructor (private readonly o: DisputeServiceInit) {
    this.log = o.peer.log.child({ component: 'dispute' })
    this.defender = new Defender({
      log: this.log,
      faults: o.faults,
      dataDir: o.peer.opts.dataDir,
      chain: o.chain,
      tapeInChild: async (runDir, step, out, o, signal) => await this.tapeInChild(runDir, step, out, o, signal),
      segmentRoots: async (runDir, first, length, faults) => await this.segmentRootsInChild(runDir, first, length, faults),
      adjudicate: async (chain, disputeId, claim) => await this.adjudicate(chain, disputeId, claim),
      forceAfterMs: this.forceAfterMs
    })
    this.challenger = new Challenger({
      log: this.log,
      peer: o.peer,
      shards: o.shards,
      chain: o.chain,
      dataDir: this.dataDir,
      forceAfterMs: this.forceAfterMs,
      tapeInChild: async (runDir, step, out, x) => await this.tapeInChild(runDir, step, out, x),
      segmentRootsInChild: async (runDir, first, length, faults) => await this.segmentRootsInChild(runDir, first, length, faults),
      adjudicate: async (chain, disputeId, claim) => await this.adjudicate(chain, disputeId, claim),
      followToEnd: async (disputeId, me) => await this.followToEnd(disputeId, me),
      maybeClaimTimeout: async (chain, disputeId, d, me) => await this.maybeClaimTimeout(chain, disputeId, d, me),
      endings: this.endings,
      ongoing: this.ongoing,
      finished: this.finished
    })
  }

  private get forceAfterMs (): number { return this.o.forceAfterMs ?? 20_000 }

  async start (): Promise<void> {
    await serve(this.o.peer.host, async (req, from) => await this.defender.answer(req, from), (err, from) => this.log.debug({ err: err.message, from }, 'dispute stream failed'))
    if (this.o.faults.silent || this.o.faults.lie) this.log.warn({ faults: this.o.faults }, 'dispute FAULT INJECTION is on (testing only)')
  }

  private get dataDir (): string { return this.o.peer.opts.dataDir }

  private async segmentRootsInChild (runDir: string, first: number, length: number, faults: Pick<TapeJob, 'faults'>['faults']): Promise<string[]> {
    const t0 = Date.now()
    const r = await runEngineJob({ kind: 'segment-roots', runDir, first, length, datasetDir: datasetDirForRun(runDir, this.dataDir, this.o.datasetDir), faults }, this.log, `segment ${first}+${length}`, { timeoutMs: 300_000 }).result
    this.log.info({ first, length, fromCheckpoint: r.fromCheckpoint, ms: Date.now() - t0 }, 're-ran a segment in a child process')
    return r.roots
  }

  private async tapeInChild (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>, signal?: AbortSignal): Promise<TapeFile> {
    const t0 = Date.now()
    const r = await runEngineJob({ kind: 'tape', runDir, step, out, datasetDir: datasetDirForRun(runDir, this.dataDir, this.o.datasetDir), ...o }, this.log, `tape of step ${step}`, { timeoutMs: 300_000, signal }).result
    const f = readTapeFile(out)
    this.log.info({ step, entries: r.entries, bytes: r.bytes, ms: Date.now() - t0 }, 'taped the disputed step in a child process')
    return f
  }

  // ------------------------------------------------------------ defender

  /** Called by the solver actor on chain.disputeOpened against it: prepares at once, then follows the dispute to its end. */
  async defend (taskId: number, disputeId: number): Promise<DisputeResult> {
    const t0 = Date.now()
    if (!this.o.faults.silent) {
      // tape now rather than on the first request: the defender's clock runs from the opening
      this.defender.session(disputeId).catch(err => this.log.warn({ disputeId, err: (err as Error).message }, 'could not prepare the defence'))
    }
    const r = await this.followToEnd(disputeId, 'defender')
    await this.revealIfForced(taskId, disputeId, r)
    const moves = (await (await this.o.chain()).dispute(disputeId))?.moves ?? 0
    this.finished.push({ disputeId, role: 'defender', ms: Date.now() - t0, moves, winner: r.winner, reason: r.reason ?? '' })
    this.log.info({ taskId, disputeId, winner: r.winner, reason: r.reason }, 'dispute over (defender)')
    return r
  }

  /**
   * After a ruling against this solver: if the step was one of its Truebit
   * forced errors, reveal its VRF so it is not slashed (and the challenger gets the
   * jackpot). The challenger has won either way; without a reveal within the
   * pallet's RevealWindow the solver is penalized like for any lost dispute.
   */
  private async revealIfForced (taskId: number, disputeId: number, r: DisputeResult): Promise<void> {
    if (r.winner !== 'challenger') return
    const chain = await this.o.chain()
    for (let attempt = 0; attempt < 3; attempt++) {
      const task = await chain.task(taskId)
      const ruling = task?.rulings.find(x => Number(x.disputeId) === disputeId)
      // no ruling: lost on time (no excuse); not awaiting: revealed already or too late
      if (task == null || ruling == null || ruling.outcome !== 'AwaitingReveal') return
      const draw = await forcedErrorDraw(chain, taskId, task)
      const pick = draw?.picks.find(p => p.step === ruling.step)
      if (pick == null) {
        this.log.warn({ taskId, disputeId, step: ruling.step }, 'a step of our proof was ruled wrong and it was not our forced error: we will be slashed')
        return
      }
      // the reveal's proof: our committed leaf after the step is the forced mark of our tape's honest post-state
      const exact = await this.forcedExactness(chain, taskId, ruling.step)
      if ('error' in exact) {
        this.log.warn({ taskId, disputeId, step: ruling.step, err: exact.error }, 'cannot prove our forced error: we will be slashed')
        return
      }
      try {
        await chain.revealForcedError(taskId, pick.output, pick.proof, exact.bytes)
        this.endings.set(disputeId, `${this.endings.get(disputeId) ?? 'ruled for the challenger'}; forced error revealed (step ${ruling.step})`)
        this.log.info({ taskId, disputeId, step: ruling.step }, 'the ruled step was one of our forced errors: VRF revealed on chain, no slash')
        return
      } catch (err) {
        this.log.warn({ taskId, disputeId, err: (err as Error).message }, 'forced-error reveal failed; retrying')
        await sleep(1000)
      }
    }
  }

  /** From the tape we defend the step with (taped once per step, with our faults) and our proof. */
  private async forcedExactness (chain: ChainClient, taskId: number, step: number): Promise<{ bytes: Uint8Array } | { error: string }> {
    try {
      const { tape, proof } = await this.defender.tapeFor(chain, taskId, step)
      return revealProofFromTape(tape, proof.stateRoots, { steps: proof.steps, rootEvery: rootEveryOfProof(proof) })
    } catch (err) { return { error: (err as Error).message } }
  }

  /** Polls the chain until the dispute is resolved: answers and makes forces (defender), beats a counterparty that let a force expire. */
  private async followToEnd (disputeId: number, me: 'challenger' | 'defender'): Promise<DisputeResult> {
    const chain = await this.o.chain()
    const deadline = Date.now() + (this.o.maxDisputeMs ?? 900_000)
    while (Date.now() < deadline) {
      const d = await chain.dispute(disputeId)
      if (d == null) throw new Error(`dispute ${disputeId} does not exist on chain`)
      if (d.status !== 'Open') return this.resultOf(disputeId, d)
      if (!await this.maybeClaimTimeout(chain, disputeId, d, me) && me === 'defender') {
        await this.defender.tick(disputeId, d).catch(err => this.log.warn({ disputeId, err: (err as Error).message }, 'dispute step failed'))
      }
      await sleep(500)
    }
    throw new Error(`dispute ${disputeId} still open after ${(this.o.maxDisputeMs ?? 900_000) / 1000} s`)
  }

  private resultOf (disputeId: number, d: DisputeInfo): DisputeResult {
    const winner = d.status === 'ChallengerWon' ? 'challenger' : 'defender'
    return { disputeId, winner, reason: this.endings.get(disputeId) ?? `resolved on chain after ${d.moves} moves` }
  }

  /** claim_timeout when a force on the other side is past due (the next block is when it would execute), or, for the defender, past the dispute deadline. */
  private async maybeClaimTimeout (chain: ChainClient, disputeId: number, d: DisputeInfo, me: 'challenger' | 'defender'): Promise<boolean> {
    const theirTurn = me === 'challenger' ? 'Defender' : 'Challenger'
    if (d.status !== 'Open') return false
    const best = await chain.bestNumber()
    const expired = d.force != null ? d.force.to === theirTurn && best + 1 > d.force.due : me === 'defender' && best + 1 > d.deadline
    if (!expired) return false
    try {
      await chain.claimTimeout(disputeId)
      this.endings.set(disputeId, `timeout: the ${theirTurn.toLowerCase()} did not answer a forced move`)
      this.log.info({ disputeId }, `claimed a timeout against the silent ${theirTurn.toLowerCase()}`)
      return true
    } catch (err) {
      this.log.debug({ disputeId, err: (err as Error).message }, 'claim_timeout refused')
      return false
    }
  }

  private async adjudicate (chain: ChainClient, disputeId: number, claim: Claim): Promise<string> {
    const bytes = encodeClaim(claim)
    const r = await chain.adjudicate(disputeId, bytes)
    const reason = `${claim.kind} claim (${bytes.length} bytes) adjudicated${r.forcedError ? ': forced error, jackpot' : ''}`
    this.endings.set(disputeId, reason)
    this.log.info({ disputeId, kind: claim.kind, bytes: bytes.length, forcedError: r.forcedError }, 'claim adjudicated on chain')
    return reason
  }

  // ---------------------------------------------------------- challenger

  /**
   * A verifier (against the solver) or a whistleblower (against a verifier's
   * verdict: played as a SolverProof dispute against the task's solver, see
   * docs/disputes.md) disputes 1-based engine step `step` (challenger.ts).
   */
  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    return await this.challenger.challenge(taskId, against, step)
  }
}
