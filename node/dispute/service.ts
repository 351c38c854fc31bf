import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KeyringPair } from '@polkadot/keyring/types'
import { hexToU8a } from '@polkadot/util'
import { sr25519Verify } from '@polkadot/util-crypto'
import type { DisputeResult } from '../../actors/ports.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { encodeClaim, moveHash, verifySigned, type Claim, type DefenderGame, type Msg, type Signed } from '../../protocols/dispute/index.js'
import { validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import { validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { validateRunIndex } from '../../protocols/verification/run-index.js'
import type { ChainClient, DisputeView } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import { runJson } from '../roles/engine.js'
import { runIndexCidOf } from '../roles/node-ports.js'
import type { ShardService } from '../shards/index.js'
import { faultArgs, type NodeFaults } from './faults.js'
import { forcedErrorDraw } from './forced-error.js'
import { makeChallenger, makeDefender } from './players.js'
import { readTraceFile, type TraceFile } from './trace-file.js'
import { SILENT, request, serve, type DisputeRequest, type DisputeResponse } from './transport.js'

// The node side of a dispute (docs/disputes.md): the challenger traces the
// disputed step in a child process, opens the dispute on chain, finds the
// defender's peer id on chain and plays the pure ChallengerGame over
// /proofswarm/dispute/2.0.0; the defender traces its own step (with the faults
// its training had) and answers with the pure DefenderGame. Every move is
// recorded on chain by its author before it is sent (chess clock); the final
// claim goes through adjudicate; a party whose clock ran out is beaten with
// claim_timeout.

const WORKER = join(dirname(fileURLToPath(import.meta.url)), '..', 'roles', 'engine-worker.js')
const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
const hex0x = (b: Uint8Array): string => '0x' + toHex(b)
/** blocks charged to the party on turn (the pallet's one-block increment) */
const charged = (elapsed: number): number => Math.max(0, elapsed - 1)

export interface DisputeServiceInit {
  peer: Peer
  chain: () => Promise<ChainClient>
  shards: ShardService
  faults: NodeFaults
  datasetDir?: string
  /** how long a whole dispute may take before the node gives up waiting (default 15 min) */
  maxDisputeMs?: number
}

interface DefenderSession {
  disputeId: number
  challenger: Uint8Array
  game: DefenderGame
  commit?: Signed
  last?: { inHash: string, reply: DisputeResponse }
  queue: Promise<unknown>
  ended?: string
}

export class DisputeService {
  private readonly log: Logger
  private readonly sessions = new Map<number, Promise<DefenderSession>>()
  /** dispute id → how this node ended it (for DisputeResult.reason) */
  private readonly endings = new Map<number, string>()
  /** figures of finished disputes (wall time, moves), for benchmarks and status */
  readonly finished: Array<{ disputeId: number, role: 'challenger' | 'defender', ms: number, moves: number, winner: string, reason: string }> = []

  constructor (private readonly o: DisputeServiceInit) {
    this.log = o.peer.log.child({ component: 'dispute' })
  }

  async start (): Promise<void> {
    await serve(this.o.peer.host, async (req, from) => await this.answer(req, from), (err, from) => this.log.debug({ err: err.message, from }, 'dispute stream failed'))
    if (this.o.faults.silent || this.o.faults.lie) this.log.warn({ faults: this.o.faults }, 'dispute FAULT INJECTION is on (testing only)')
  }

  private get dataDir (): string { return this.o.peer.opts.dataDir }

  private async traceInChild (runDir: string, step: number, out: string, extra: string[]): Promise<TraceFile> {
    const t0 = Date.now()
    const args = ['trace', runDir, String(step), out, ...(this.o.datasetDir != null ? ['--dataset-dir', this.o.datasetDir] : []), ...extra]
    const r = await runJson<{ bytes: number, entries: number }>(WORKER, args, this.log, `trace of step ${step}`, { timeoutMs: 300_000 }).result
    const f = readTraceFile(out)
    this.log.info({ step, entries: r.entries, bytes: r.bytes, ms: Date.now() - t0 }, 'traced the disputed step in a child process')
    return f
  }

  // ------------------------------------------------------------ defender

  private session (disputeId: number): Promise<DefenderSession> {
    let s = this.sessions.get(disputeId)
    if (s == null) {
      s = this.openSession(disputeId)
      this.sessions.set(disputeId, s)
      s.catch(() => this.sessions.delete(disputeId)) // retry on the next request
    }
    return s
  }

  private async openSession (disputeId: number): Promise<DefenderSession> {
    const chain = await this.o.chain()
    const d = await chain.dispute(disputeId)
    if (d == null) throw new Error(`dispute ${disputeId} does not exist on chain`)
    if (d.defender !== chain.accountId) throw new Error(`this node is not the defender of dispute ${disputeId}`)
    if (d.kind !== 'SolverProof') throw new Error('only SolverProof disputes are played by this node')
    const task = await chain.task(d.taskId)
    if (task == null) throw new Error(`task ${d.taskId} does not exist`)
    const runDir = join(this.dataDir, 'tasks', String(d.taskId), 'run')
    if (!existsSync(join(runDir, 'proof.json'))) throw new Error(`no run of task ${d.taskId} in ${runDir}`)
    const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
    if ('0x' + proof.proofRoot.replace(/^0x/, '') !== task.proofRoot) throw new Error(`the local proof of task ${d.taskId} is not the committed one`)
    const dir = join(this.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    // the same faults as the training child had (and its private forced error), so the trace is the one the proof was built from
    const forced = await forcedErrorDraw(chain, d.taskId, task)
    const trace = await this.traceInChild(runDir, d.disputedStep + 1, join(dir, `${disputeId}-defender.cbor`), faultArgs(this.o.faults, forced?.step))
    // a badOpen at step 0 carries the program: the chain recomputes the initial state
    const program = existsSync(join(runDir, 'task.json')) ? validateProgram(JSON.parse(readFileSync(join(runDir, 'task.json'), 'utf8'))) : undefined
    const game = makeDefender({ disputeId, trace, stateRoots: proof.stateRoots, pair: chain.pair, lie: this.o.faults.lie, program })
    return { disputeId, challenger: hexToU8a(d.challenger), game, queue: Promise.resolve() }
  }

  private async answer (req: DisputeRequest, from: string): Promise<DisputeResponse> {
    if (this.o.faults.silent) { this.log.warn({ disputeId: req.d, from }, 'FAULT silent: not answering a dispute request'); return { err: SILENT } }
    const s = await this.session(req.d)
    // one move at a time per dispute
    const run = s.queue.then(async () => await this.answerIn(s, req))
    s.queue = run.catch(() => {})
    return await run
  }

  private async answerIn (s: DefenderSession, req: DisputeRequest): Promise<DisputeResponse> {
    const chain = await this.o.chain()
    if (s.ended != null) return { end: s.ended }
    if (req.hello === true) {
      if (s.commit == null) {
        const c = s.game.commit()
        await chain.recordMove(s.disputeId, hex0x(moveHash(c)))
        s.commit = c
      }
      return { m: s.commit }
    }
    const signed = req.m!
    const inHash = hex0x(moveHash(signed))
    let msg: Msg
    try { msg = verifySigned(signed, s.challenger, verify) } catch (err) { return { err: `rejected: ${(err as Error).message}` } }
    // the move must be the one the challenger recorded on chain (its clock stopped with it)
    let d: DisputeView | null = null
    for (let i = 0; i < 10; i++) {
      d = await chain.dispute(s.disputeId)
      if (d == null || d.status !== 'Open' || (d.lastMove === inHash && d.turn === 'Defender')) break
      // a retry of a move we already answered: the same answer, not recorded twice
      if (s.last?.inHash === inHash) return s.last.reply
      await sleep(300)
    }
    if (d == null || d.status !== 'Open') { s.ended = 'the dispute is over'; return { end: s.ended } }
    if (d.lastMove !== inHash || d.turn !== 'Defender') return { err: 'that move is not recorded on chain' }
    const r = s.game.respond(msg, signed)
    let reply: DisputeResponse
    if (r.claim != null) {
      const out = await this.adjudicate(chain, s.disputeId, r.claim)
      s.ended = `defender claim ${r.claim.kind}: ${out}`
      reply = { end: s.ended }
    } else {
      await chain.recordMove(s.disputeId, hex0x(moveHash(r.reply!)))
      reply = { m: r.reply! }
    }
    s.last = { inHash, reply }
    return reply
  }

  /** Called by the solver actor on chain.disputeOpened against it: prepares at once, then follows the dispute to its end. */
  async defend (taskId: number, disputeId: number): Promise<DisputeResult> {
    const t0 = Date.now()
    if (!this.o.faults.silent) {
      // trace now rather than on the first request: the defender's clock runs from the opening
      this.session(disputeId).catch(err => this.log.warn({ disputeId, err: (err as Error).message }, 'could not prepare the defence'))
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
      try {
        await chain.revealForcedError(taskId, draw.output, draw.proof)
        this.endings.set(disputeId, `${this.endings.get(disputeId) ?? 'ruled for the challenger'}; forced error revealed (step ${draw.step})`)
        this.log.info({ taskId, disputeId, step: draw.step }, 'the ruled step was our forced error: VRF revealed on chain, no slash')
        return
      } catch (err) {
        this.log.warn({ taskId, disputeId, err: (err as Error).message }, 'forced-error reveal failed; retrying')
        await sleep(1000)
      }
    }
  }

  /** Polls the chain until the dispute is resolved; beats a counterparty whose clock ran out. */
  private async followToEnd (disputeId: number, me: 'challenger' | 'defender'): Promise<DisputeResult> {
    const chain = await this.o.chain()
    const deadline = Date.now() + (this.o.maxDisputeMs ?? 900_000)
    while (Date.now() < deadline) {
      const d = await chain.dispute(disputeId)
      if (d == null) throw new Error(`dispute ${disputeId} does not exist on chain`)
      if (d.status !== 'Open') return this.resultOf(disputeId, d)
      await this.maybeClaimTimeout(chain, disputeId, d, me)
      await sleep(500)
    }
    throw new Error(`dispute ${disputeId} still open after ${(this.o.maxDisputeMs ?? 900_000) / 1000} s`)
  }

  private resultOf (disputeId: number, d: DisputeView): DisputeResult {
    const winner = d.status === 'ChallengerWon' ? 'challenger' : 'defender'
    return { disputeId, winner, reason: this.endings.get(disputeId) ?? `resolved on chain after ${d.moves} moves` }
  }

  /** claim_timeout when the other side is on turn and out of clock (the next block is when it would execute). */
  private async maybeClaimTimeout (chain: ChainClient, disputeId: number, d: DisputeView, me: 'challenger' | 'defender'): Promise<boolean> {
    const theirTurn = me === 'challenger' ? 'Defender' : 'Challenger'
    if (d.status !== 'Open' || d.turn !== theirTurn) return false
    const clock = d.turn === 'Challenger' ? d.challengerClock : d.defenderClock
    const best = await chain.bestNumber()
    if (charged(best + 1 - d.lastMoveAt) <= clock) return false
    try {
      await chain.claimTimeout(disputeId)
      this.endings.set(disputeId, `timeout: the ${theirTurn.toLowerCase()} missed its clock`)
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
    const runDir = join(this.dataDir, 'verify', String(taskId))
    const { program, proof } = await this.ensureReplayDir(taskId, task, runDir, step, defenderPeer)
    const dir = join(this.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const trace = await this.traceInChild(runDir, step, join(dir, `task-${taskId}-step-${step}-challenger.cbor`), ['--dataset-proofs'])
    // only dispute what we can win: the pre-state is agreed, the post-state is not
    if (trace.stateRootBefore !== proof.stateRoots[step - 1]) throw new Error(`our state before step ${step} differs from the proof's: dispute an earlier step`)
    if (trace.stateRootAfter === proof.stateRoots[step]) throw new Error(`step ${step} replays to the committed root: nothing to dispute`)
    const disputeId = Number(await chain.openDispute(taskId, task.solver, 'SolverProof', step - 1))
    this.log.info({ taskId, disputeId, step, chainStep: step - 1, defender: defenderPeer }, 'dispute opened on chain')
    const game = makeChallenger({ disputeId, trace, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: hexToU8a(task.solver), program })
    const defenderKey = hexToU8a(task.solver)
    let moves = 0
    try {
      let incoming = await this.ask(chain, disputeId, defenderPeer, { d: disputeId, hello: true })
      while (incoming != null) {
        let msg: Msg
        try { msg = verifySigned(incoming, defenderKey, verify) } catch (err) {
          this.log.warn({ disputeId, err: (err as Error).message }, 'a defender message failed verification: asking again')
          const again = game.repeat()
          if (!('send' in again)) break
          incoming = await this.ask(chain, disputeId, defenderPeer, { d: disputeId, m: again.send }); continue
        }
        moves++
        const next = game.onMessage(msg, incoming)
        if ('claim' in next) { await this.adjudicate(chain, disputeId, next.claim); break }
        if ('fail' in next) { this.log.error({ disputeId, why: next.fail }, 'the challenger cannot continue the game'); this.endings.set(disputeId, `challenger stuck: ${next.fail}`); break }
        await chain.recordMove(disputeId, hex0x(moveHash(next.send)))
        moves++
        incoming = await this.ask(chain, disputeId, defenderPeer, { d: disputeId, m: next.send })
      }
    } catch (err) {
      this.log.warn({ disputeId, err: (err as Error).message }, 'the dispute game stopped early; following it on chain')
    }
    const result = await this.followToEnd(disputeId, 'challenger')
    this.finished.push({ disputeId, role: 'challenger', ms: Date.now() - t0, moves, winner: result.winner, reason: result.reason ?? '' })
    this.log.info({ taskId, disputeId, winner: result.winner, reason: result.reason, ms: Date.now() - t0 }, 'dispute over (challenger)')
    return result
  }

  /**
   * One exchange with the defender, retried until it answers, the dispute
   * ends, or its clock runs out (then claim_timeout). null: the game is over.
   */
  private async ask (chain: ChainClient, disputeId: number, peerId: string, req: DisputeRequest): Promise<Signed | null> {
    for (let attempt = 0; attempt < 10_000; attempt++) {
      const d = await chain.dispute(disputeId)
      if (d == null || d.status !== 'Open') return null
      if (await this.maybeClaimTimeout(chain, disputeId, d, 'challenger')) return null
      try {
        const res = await request(this.o.peer.host, peerId, req, 15_000)
        if (res.m != null) return res.m
        if (res.end != null) { this.log.info({ disputeId, end: res.end }, 'the defender ended the game'); return null }
        this.log.debug({ disputeId, err: res.err }, 'the defender refused; retrying')
      } catch (err) {
        this.log.debug({ disputeId, err: (err as Error).message }, 'no answer from the defender; retrying')
      }
      await sleep(1000)
    }
    return null
  }

  /**
   * The challenger's replay directory: task.json, proof.json and the checkpoint before `step`
   * (fetched via the run index when missing; checkpoints from the solver, `solverPeer`, as they
   * have no DHT provider records).
   */
  private async ensureReplayDir (taskId: number, task: NonNullable<Awaited<ReturnType<ChainClient['task']>>>, runDir: string, step: number, solverPeer: string): Promise<{ program: TaskProgram, proof: ProofOfLearning }> {
    const indexCid = runIndexCidOf(task)
    if (indexCid == null) throw new Error(`task ${taskId} has no run index committed`)
    mkdirSync(runDir, { recursive: true })
    const index = validateRunIndex(JSON.parse(new TextDecoder().decode(await this.o.shards.fetchBytes(indexCid))))
    if (!existsSync(join(runDir, 'task.json'))) await this.o.shards.fetchToFile(index.program, join(runDir, 'task.json'))
    if (!existsSync(join(runDir, 'proof.json'))) await this.o.shards.fetchToFile(index.proof, join(runDir, 'proof.json'))
    const { info: _i, ...program } = validateProgram(JSON.parse(readFileSync(join(runDir, 'task.json'), 'utf8')))
    const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
    if ('0x' + proof.proofRoot.replace(/^0x/, '') !== task.proofRoot) throw new Error(`proof.json of task ${taskId} is not the committed proof`)
    const ck = index.checkpoints.filter(c => c.step <= step - 1).pop()
    if (ck == null) throw new Error(`no checkpoint before step ${step}`)
    const dir = join(runDir, 'checkpoints', `step-${String(ck.step).padStart(8, '0')}`)
    if (!existsSync(join(dir, 'manifest.json'))) {
      mkdirSync(dir, { recursive: true })
      await this.o.shards.fetchToFile(ck.manifest, join(dir, 'manifest.json'), { providers: [solverPeer] })
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { dataFile?: string }
      await this.o.shards.fetchToFile(ck.data, join(dir, manifest.dataFile ?? 'state.bin'), { providers: [solverPeer] })
    }
    return { program, proof }
  }
}
