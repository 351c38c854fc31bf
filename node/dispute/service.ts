import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { KeyringPair } from '@polkadot/keyring/types'
import { hexToU8a } from '@polkadot/util'
import type { DisputeResult } from '../../actors/ports.js'
import { bytesEqual } from '../../protocols/commit/merkle.js'
import { decodeSignedBytes, encodeClaim, encodeSigned, moveHash, narrowingOf, verifySigned, type ChallengerGame, type Claim, type DisputeContext, type Msg, type NarrowStep, type Signed } from '../../protocols/dispute/index.js'
import type { ChainClient, DisputeInfo } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import { runEngineJob } from '../engine/engine.js'
import type { TapeJob } from '../engine/protocol.js'
import type { ShardService } from '../shards/index.js'
import { Defender, contextOf, verify } from './defender.js'
import type { NodeFaults } from './faults.js'
import { forcedErrorDraw } from './forced-error.js'
import { exactnessFromTape } from './forced-exact.js'
import { nanFacts, makeChallenger } from './players.js'
import { ensureReplayDir } from './replay-dir.js'
import { readTapeFile, type TapeFile } from '../engine/tape-file.js'
import { request, serve, type DisputeRequest } from './transport.js'

// The node side of a dispute (docs/disputes.md): the challenger tapes the
// disputed step in a child process, opens the dispute on chain, finds the
// defender's peer id on chain and plays the pure ChallengerGame over
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

export interface DisputeRecord { disputeId: number, role: 'challenger' | 'defender', ms: number, moves: number, winner: string, reason: string, taskId?: number, step?: number, narrowing?: NarrowStep[], open?: boolean }

/** What came from the defender: off chain, or on chain (then `forced`: it was forced on us and we answer on chain). */
interface Incoming { signed: Signed, forced: boolean }

export class DisputeService {
  private readonly log: Logger
  private readonly defender: Defender
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
      adjudicate: async (chain, disputeId, claim) => await this.adjudicate(chain, disputeId, claim),
      forceAfterMs: this.forceAfterMs
    })
  }

  private get forceAfterMs (): number { return this.o.forceAfterMs ?? 20_000 }
  /** when the challenger last read its dispute on chain */
  private chainCheckedAt = 0

  async start (): Promise<void> {
    await serve(this.o.peer.host, async (req, from) => await this.defender.answer(req, from), (err, from) => this.log.debug({ err: err.message, from }, 'dispute stream failed'))
    if (this.o.faults.silent || this.o.faults.lie) this.log.warn({ faults: this.o.faults }, 'dispute FAULT INJECTION is on (testing only)')
  }

  private get dataDir (): string { return this.o.peer.opts.dataDir }

  private async tapeInChild (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>, signal?: AbortSignal): Promise<TapeFile> {
    const t0 = Date.now()
    const r = await runEngineJob({ kind: 'tape', runDir, step, out, datasetDir: this.o.datasetDir, ...o }, this.log, `tape of step ${step}`, { timeoutMs: 300_000, signal }).result
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
   * After a ruling against this solver: if the step was its Truebit forced
   * error, reveal its VRF so it is not slashed (and the challenger gets the
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
      if (draw?.step == null || draw.step !== ruling.step) {
        this.log.warn({ taskId, disputeId, step: ruling.step }, 'a step of our proof was ruled wrong and it was not our forced error: we will be slashed')
        return
      }
      // the exactness proof: our committed post-state is the honest one of our tape with only the forced element changed
      const exact = await this.forcedExactness(chain, taskId, ruling.step)
      if ('error' in exact) {
        this.log.warn({ taskId, disputeId, step: ruling.step, err: exact.error }, 'cannot prove our forced error exact: we will be slashed')
        return
      }
      try {
        await chain.revealForcedError(taskId, draw.output, draw.proof, exact.bytes)
        this.endings.set(disputeId, `${this.endings.get(disputeId) ?? 'ruled for the challenger'}; forced error revealed (step ${draw.step})`)
        this.log.info({ taskId, disputeId, step: draw.step }, 'the ruled step was our forced error: VRF revealed on chain, no slash')
        return
      } catch (err) {
        this.log.warn({ taskId, disputeId, err: (err as Error).message }, 'forced-error reveal failed; retrying')
        await sleep(1000)
      }
    }
  }

  /** From the tape we defend the step with (taped once per step, with our faults and forced error) and our proof. */
  private async forcedExactness (chain: ChainClient, taskId: number, step: number): Promise<{ bytes: Uint8Array } | { error: string }> {
    try {
      const { tape, proof } = await this.defender.tapeFor(chain, taskId, step)
      return exactnessFromTape(tape, proof.stateRoots)
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
   * docs/disputes.md) disputes 1-based engine step `step`.
   */
  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    const t0 = Date.now()
    if (step == null || !Number.isInteger(step) || step < 1) throw new Error(`task ${taskId}: no disputed step to challenge`)
    const chain = await this.o.chain()
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist on chain`)
    if (task.solver == null) throw new Error(`task ${taskId} has no solver`)
    if (against === 'verifier') this.log.info({ taskId, step }, 'a verdict accepted a wrong step: challenging the solver\'s proof (a verdict is disputed through the proof it judged; verifiers that accepted the step are slashed with the solver)')
    const defenderNode = await chain.node(task.solver)
    if (defenderNode == null) throw new Error(`the solver ${task.solver} is not registered`)
    const defenderPeer = Buffer.from(defenderNode.peerId.replace(/^0x/, ''), 'hex').toString('utf8')
    // announce the step: the defender tapes it while we tape ours, so the game can start as soon as the dispute is opened
    void request(this.o.peer.host, defenderPeer, { d: 0, prepare: { task: taskId, step: step - 1 } }, 5_000).catch(() => {})
    const runDir = join(this.dataDir, 'verify', String(taskId))
    const { program, proof } = await ensureReplayDir(this.o.shards, taskId, task, runDir, step, defenderPeer)
    const dir = join(this.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const tape = await this.tapeInChild(runDir, step, join(dir, `task-${taskId}-step-${step}-challenger.cbor`), { datasetProofs: true })
    // only dispute what we can win: the pre-state is agreed, and the post-state is not, or the
    // step holds a NaN the defender committed, or a diverged step does not diverge as it says
    if (tape.stateRootBefore !== proof.stateRoots[step - 1]) throw new Error(`our state before step ${step} differs from the proof's: dispute an earlier step`)
    const nan = nanFacts(tape, task.divergence != null && step - 1 === task.stepCount ? task.divergence : undefined)
    if (nan.divergence !== undefined && !nan.wrong) throw new Error(`step ${step} diverges where the proof says: nothing to dispute`)
    if (!nan.wrong && tape.stateRootAfter === proof.stateRoots[step]) throw new Error(`step ${step} replays to the committed root: nothing to dispute`)
    const disputeId = Number(await chain.openDispute(taskId, task.solver, 'SolverProof', step - 1))
    this.log.info({ taskId, disputeId, step, chainStep: step - 1, defender: defenderPeer }, 'dispute opened on chain')
    const ctx = contextOf(chain, taskId, disputeId)
    const game = makeChallenger({
      disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: hexToU8a(task.solver), program, nan
    })
    const defenderKey = hexToU8a(task.solver)
    let moves = 0
    let sent: Signed | undefined
    const heard: Msg[] = []
    const live: DisputeRecord = { disputeId, role: 'challenger', ms: 0, moves: 0, winner: '', reason: 'in progress', taskId, step: step - 1, narrowing: [], open: true }
    this.ongoing.set(disputeId, live)
    try {
      let incoming = await this.ask(chain, ctx, game, defenderKey, defenderPeer, undefined, false)
      while (incoming != null) {
        const msg = verifySigned(incoming.signed, defenderKey, verify, ctx)
        heard.push(msg)
        moves++
        Object.assign(live, { ms: Date.now() - t0, moves, narrowing: narrowingOf(heard) })
        const next = game.onMessage(msg, incoming.signed)
        if ('claim' in next) { await this.adjudicate(chain, disputeId, next.claim); break }
        if ('fail' in next) { this.log.error({ disputeId, why: next.fail }, 'the challenger cannot continue the game'); this.endings.set(disputeId, `challenger stuck: ${next.fail}`); break }
        // the same move again: the defender's answer was of no use (not what we asked for, a refusal); only the chain can make it answer
        const repeated = next.send === sent
        sent = next.send
        if (incoming.forced && !repeated) await chain.answerMove(disputeId, encodeSigned(next.send))
        if (!repeated) moves++
        incoming = await this.ask(chain, ctx, game, defenderKey, defenderPeer, next.send, repeated)
      }
    } catch (err) {
      this.log.warn({ disputeId, err: (err as Error).message }, 'the dispute game stopped early; following it on chain')
    }
    const result = await this.followToEnd(disputeId, 'challenger').finally(() => this.ongoing.delete(disputeId))
    this.finished.push({ disputeId, role: 'challenger', ms: Date.now() - t0, moves, winner: result.winner, reason: result.reason ?? '', taskId, step: step - 1, narrowing: narrowingOf(heard) })
    this.log.info({ taskId, disputeId, winner: result.winner, reason: result.reason, ms: Date.now() - t0 }, 'dispute over (challenger)')
    return result
  }

  /**
   * The defender's answer to our move `mine` (undefined: its commit), off
   * chain, or on chain when it forced it on us or answered our force. A
   * defender quiet for forceAfterMs gets our move forced on chain (the first
   * force demands its commit); one that then lets the force expire loses by
   * claim_timeout. null: the game is over.
   */
  private async ask (
    chain: ChainClient, ctx: DisputeContext, game: ChallengerGame, defenderKey: Uint8Array, peerId: string, mine: Signed | undefined, forceNow: boolean
  ): Promise<Incoming | null> {
    const disputeId = ctx.disputeId
    const mySeq = mine === undefined ? -1 : verifySigned(mine, chain.pair.publicKey, verify, ctx).seq
    const answers = (m: Msg): boolean => m.seq === mySeq + 1 && (mine === undefined || bytesEqual(m.prev, moveHash(mine)))
    const req: DisputeRequest = mine === undefined ? { d: disputeId, hello: true } : { d: disputeId, m: mine }
    const since = forceNow ? 0 : Date.now()
    let forced = false
    for (let attempt = 0; attempt < 10_000; attempt++) {
      // the first try goes straight to the defender; the chain is read once the off-chain answer is late,
      // and at least every 2 s, well within a response window, in case the defender forced a move on us
      if (attempt > 0 || forceNow || Date.now() - this.chainCheckedAt > 2_000) {
        this.chainCheckedAt = Date.now()
        const d = await chain.dispute(disputeId)
        if (d == null || d.status !== 'Open') return null
        if (await this.maybeClaimTimeout(chain, disputeId, d, 'challenger')) return null
        // the defender forced its previous message while ours was on the way: ours is the answer, on chain
        if (mine !== undefined && d.force?.to === 'Challenger' && d.force.seq === mySeq) {
          await chain.answerMove(disputeId, encodeSigned(mine))
          continue
        }
        if (d.nextSeq >= mySeq + 2 && d.force?.to !== 'Defender') {
          const bytes = await chain.disputeLastMove(disputeId)
          if (bytes != null) {
            const signed = decodeSignedBytes(bytes)
            if (answers(verifySigned(signed, defenderKey, verify, ctx))) return { signed, forced: d.force?.to === 'Challenger' }
          }
        }
        if (!forced && d.force == null && Date.now() - since > this.forceAfterMs) {
          forced = true
          const p = game.pending
          try {
            const r = await chain.forceMove(
              disputeId, p === undefined ? new Uint8Array() : encodeSigned(p.theirs), p === undefined ? new Uint8Array() : encodeSigned(p.mine)
            )
            this.log.info({ disputeId, seq: r.seq, due: r.due }, 'the defender is quiet: our move forced on chain')
          } catch (err) { this.log.warn({ disputeId, err: (err as Error).message }, 'force_move refused') }
        }
      }
      if (forceNow) { await sleep(500); continue }
      try {
        const res = await request(this.o.peer.host, peerId, req, 5_000)
        if (res.m != null) {
          try {
            if (answers(verifySigned(res.m, defenderKey, verify, ctx))) return { signed: res.m, forced: false }
            this.log.warn({ disputeId }, 'the defender\'s message does not answer ours')
          } catch (err) { this.log.warn({ disputeId, err: (err as Error).message }, 'a defender message failed verification') }
        } else if (res.end != null) { this.log.info({ disputeId, end: res.end }, 'the defender ended the game'); return null } else this.log.debug({ disputeId, err: res.err }, 'the defender refused; retrying')
      } catch (err) {
        this.log.debug({ disputeId, err: (err as Error).message }, 'no answer from the defender; retrying')
      }
      await sleep(1000)
    }
    return null
  }
}
