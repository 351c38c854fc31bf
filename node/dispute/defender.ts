import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hexToU8a } from '@polkadot/util'
import { sr25519Verify } from '@polkadot/util-crypto'
import { toHex } from '../../protocols/commit/merkle.js'
import { decodeMsg, decodeSignedBytes, encodeSigned, moveHash, verifySigned, type Claim, type DefenderGame, type DisputeContext, type Msg, type SegmentDefender, type Signed } from '../../protocols/dispute/index.js'
import { rootEveryOfProof, validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { segmentCount } from '../../protocols/pol/segments.js'
import { validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import type { ChainClient, DisputeInfo } from '../chain/client.js'
import type { Logger } from '../log.js'
import { tapeFaults, type NodeFaults } from './faults.js'
import { disputeShapeOf } from './dispute-shape.js'
import { forcedErrorDraw } from './forced-error.js'
import { makeDefender } from './players.js'
import { SegmentRuns, segmentDefenderOf, shortSegmentOf, type SegmentRunHost } from './segment-defence.js'
import type { TapeJob } from '../engine/protocol.js'
import type { TapeFile } from '../engine/tape-file.js'
import { SILENT, type DisputeRequest, type DisputeResponse } from './transport.js'
import { TapeLane } from './tape-lane.js'

// The defender's side of a dispute (docs/disputes.md, "Node side"): it tapes
// the disputed step as soon as the dispute is opened, then answers the
// challenger's signed messages off chain. It forces its last message on chain
// when the challenger goes quiet (its commit if the challenger never opens),
// and answers on chain any move the challenger forces on it.

export const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }

/** A dispute's signing context; a task with a root every m > 1 steps has segment disputes (seq 0 is the defender's `segment`). */
export const contextOf = (chain: ChainClient, taskId: number | bigint, disputeId: number, rootEvery = 1): DisputeContext =>
  ({ genesis: hexToU8a(chain.genesisHash), taskId: Number(taskId), disputeId, ...(rootEvery > 1 ? { segmented: true } : {}) })

export interface DefenderHost extends SegmentRunHost {
  log: Logger
  faults: NodeFaults
  dataDir: string
  chain: () => Promise<ChainClient>
  /** an engine tape job (1-based step), its file read back */
  tapeInChild: (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>, signal?: AbortSignal) => Promise<TapeFile>
  adjudicate: (chain: ChainClient, disputeId: number, claim: Claim) => Promise<string>
  /** quiet time after which a party forces its pending move on chain */
  forceAfterMs: number
}

interface Session {
  disputeId: number
  taskId: number
  ctx: DisputeContext
  challenger: Uint8Array
  /** the step game; in a segment dispute built once the challenger opens a step */
  game?: DefenderGame
  stepGame?: Promise<DefenderGame>
  /** a segment dispute's player (m > 1): our signed roots inside the segment, the opening */
  seg?: SegmentDefender
  /** our message 0: the commit, or in a segment dispute the segment */
  first: Signed
  /** FAULT short-segment: the unusable segment sent off chain instead of `first` */
  offChainFirst?: Signed
  program?: TaskProgram
  /** hashes of the messages this defender signed: a challenger message must answer one of them */
  sent: Set<string>
  /** answers by the hash of the message they answer (a retry gets the same answer) */
  answers: Map<string, DisputeResponse>
  /** the last exchange: the challenger message answered (none for the commit) and our answer */
  last?: { theirs?: Signed, mine: Signed, at: number }
  /** the message of ours last forced on chain (never twice) */
  forced?: Signed
  queue: Promise<unknown>
  ended?: string
}

const hashHex = (s: Signed): string => toHex(moveHash(s))

export class Defender {
  private readonly sessions = new Map<number, Promise<Session>>()
  /** tapes by task and step: a second dispute of the same step (a verifier and a whistleblower) does not tape again */
  private readonly tapes = new Map<string, Promise<{ tape: TapeFile, proof: ProofOfLearning }>>()
  private readonly segments: SegmentRuns
  /** one tape at a time, in the order the disputes were opened (the chain's TapeQueue) */
  private readonly lane = new TapeLane()

  constructor (private readonly h: DefenderHost) {
    // a segment's re-run is an engine process like a tape: it takes its turn in the lane
    this.segments = new SegmentRuns({
      segmentRoots: async (runDir, first, length, faults) => await this.lane.run(`segment/${runDir}/${first}`, async () => await h.segmentRoots(runDir, first, length, faults))
    })
  }

  session (disputeId: number): Promise<Session> {
    let s = this.sessions.get(disputeId)
    if (s == null) {
      s = this.openSession(disputeId)
      this.sessions.set(disputeId, s)
      s.catch(() => this.sessions.delete(disputeId)) // retry on the next request
    }
    return s
  }

  private async openSession (disputeId: number): Promise<Session> {
    const chain = await this.h.chain()
    const d = await chain.dispute(disputeId)
    if (d == null) throw new Error(`dispute ${disputeId} does not exist on chain`)
    if (d.defender !== chain.accountId) throw new Error(`this node is not the defender of dispute ${disputeId}`)
    if (d.kind !== 'SolverProof') throw new Error('only SolverProof disputes are played by this node')
    const taskId = Number(d.taskId)
    const rootEvery = await chain.rootEvery(taskId)
    const task = rootEvery > 1 ? await chain.task(taskId) : undefined
    if (rootEvery > 1 && task == null) throw new Error(`task ${taskId} does not exist`)
    // at m > 1 every dispute is of a segment but one of a diverged proof's last step, named one past the segments
    const shape = task == null ? { kind: 'step' as const, step: d.disputedStep } : disputeShapeOf(task, rootEvery, d.disputedStep)
    const ctx = contextOf(chain, taskId, disputeId, shape.kind === 'segment' ? rootEvery : 1)
    // a badOpen at step 0 carries the program: the chain recomputes the initial state
    const taskFile = join(this.runDir(taskId), 'task.json')
    const program = existsSync(taskFile) ? validateProgram(JSON.parse(readFileSync(taskFile, 'utf8'))) : undefined
    const base = { disputeId, taskId, ctx, challenger: hexToU8a(d.challenger), program, answers: new Map(), queue: Promise.resolve() }
    if (shape.kind === 'segment') {
      // a segment dispute: disputed_step is the segment; we sign our roots inside it, and tape the step the challenger opens
      const proof = await this.proofOf(chain, taskId, rootEvery)
      const inside = await this.segmentInside(chain, taskId, d.disputedStep)
      const seg = segmentDefenderOf({ disputeId, ctx, pair: chain.pair, j: d.disputedStep, proof, inside, program })
      const first = seg.segment()
      const offChainFirst = this.h.faults.shortSegment === true ? shortSegmentOf(first, ctx, chain.pair) : undefined
      if (offChainFirst !== undefined) this.h.log.warn({ disputeId }, 'FAULT short-segment: sending a segment with a root left out')
      return { ...base, seg, first, offChainFirst, sent: new Set([hashHex(first)]), last: { mine: first, at: Date.now() } }
    }
    // a one-step dispute; at m > 1 the diverged step k = step_count, from the proof's last leaf
    const { tape, proof } = await this.tapeFor(chain, taskId, shape.step)
    const game = makeDefender({
      disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair, lie: this.h.faults.lie, program,
      ...(shape.spacing !== undefined ? { spacing: shape.spacing } : {})
    })
    const commit = game.commit()
    // the commit is published at once: the timer to force it runs from now, whether or not the challenger says hello
    return { ...base, game, first: commit, sent: new Set([hashHex(commit)]), last: { mine: commit, at: Date.now() } }
  }

  private runDir (taskId: number): string { return join(this.h.dataDir, 'tasks', String(taskId), 'run') }

  /** Our run's proof of the task: the one committed on chain, with the chain's root spacing. */
  private async proofOf (chain: ChainClient, taskId: number, rootEvery?: number): Promise<ProofOfLearning> {
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist`)
    const runDir = this.runDir(taskId)
    if (!existsSync(join(runDir, 'proof.json'))) throw new Error(`no run of task ${taskId} in ${runDir}`)
    const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
    if ('0x' + proof.proofRoot.replace(/^0x/, '') !== task.proofRoot) throw new Error(`the local proof of task ${taskId} is not the committed one`)
    const m = rootEvery ?? await chain.rootEvery(taskId)
    if (rootEveryOfProof(proof) !== m) throw new Error(`the local proof of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${m}`)
    return proof
  }

  /** Our roots inside segment j, from a re-run with the faults our training had (throws SegmentContradicted when they contradict our proof). */
  private async segmentInside (chain: ChainClient, taskId: number, j: number): Promise<Uint8Array[]> {
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist`)
    const proof = await this.proofOf(chain, taskId)
    const forced = await forcedErrorDraw(chain, taskId, task)
    try {
      return await this.segments.inside(taskId, this.runDir(taskId), proof, j, tapeFaults(this.h.faults, forced?.step))
    } catch (err) {
      this.h.log.error({ taskId, j, err: (err as Error).message }, 'cannot defend the segment')
      throw err
    }
  }

  /**
   * The run's tape of on-chain step `step` of task `taskId`, taped once (a
   * child process) for every dispute of that step, with the faults the
   * training had, so it is the tape the proof was built from. `announced`:
   * for a step announced before its dispute, taped only if the lane is idle.
   */
  async tapeFor (chain: ChainClient, taskId: number, step: number, announced = false): Promise<{ tape: TapeFile, proof: ProofOfLearning }> {
    const key = `${taskId}/${step}`
    let taped = this.tapes.get(key)
    if (taped !== undefined && !announced) this.lane.release(key)
    if (taped === undefined) {
      const signal = announced ? this.lane.announce(key) : undefined
      if (announced && signal === undefined) throw new Error('busy taping: an announced step waits for its dispute')
      const made = (async () => {
        const task = await chain.task(taskId)
        if (task == null) throw new Error(`task ${taskId} does not exist`)
        const runDir = this.runDir(taskId)
        const proof = await this.proofOf(chain, taskId)
        const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
        const forced = await forcedErrorDraw(chain, taskId, task)
        const out = join(dir, `task-${taskId}-step-${step + 1}-defender.cbor`)
        const faults = tapeFaults(this.h.faults, forced?.step)
        const tape = await this.lane.run(key, async () => await this.h.tapeInChild(runDir, step + 1, out, { faults }, signal))
        return { tape, proof }
      })()
      this.tapes.set(key, made)
      made.catch(() => { this.tapes.delete(key); this.lane.release(key) })
      taped = made
    }
    return await taped
  }

  /**
   * A challenger about to open a dispute at `step` asks us to tape it while
   * it tapes its own: the dispute then runs as soon as it is opened. Only
   * for a registered peer, a task we solved and a step of its proof; at most
   * one tape per step, as for a dispute, and only while no other tape runs.
   * With a root every m > 1 steps, `step` names a segment, which we re-run
   * (the step to tape is known only at the opening), under the same rule.
   */
  private async prepare (taskId: number, step: number, from: string): Promise<DisputeResponse> {
    const chain = await this.h.chain()
    const task = await chain.task(taskId)
    if (task == null || task.solver !== chain.accountId || task.phase !== 'Verifying') return { err: 'not a step of a proof of ours under verification' }
    const m = await chain.rootEvery(taskId)
    // what a dispute may name: the steps (m = 1) or segments (m > 1), and one more on a diverged proof (its last step)
    if (step >= (m > 1 ? segmentCount(task.stepCount, m) : task.stepCount) + (task.divergence != null ? 1 : 0)) return { err: 'not a step of a proof of ours under verification' }
    if (await chain.peerOwner(from) == null) return { err: 'not a registered peer' }
    // a diverged m > 1 proof's last step is taped as at m = 1
    const shape = disputeShapeOf(task, m, step)
    // announcements cost their sender nothing: one taped at a time, and none while a dispute's tape waits
    if (shape.kind === 'segment') {
      if (!this.lane.idle && !this.segments.has(taskId, step)) return { err: 'busy taping another step' }
      this.segmentInside(chain, taskId, step).catch(() => {})
      this.h.log.info({ taskId, segment: step, from }, 'a segment dispute is announced: re-running the segment now')
      return { end: 'preparing' }
    }
    if (!this.lane.idle && !this.tapes.has(`${taskId}/${shape.step}`)) return { err: 'busy taping another step' }
    this.tapeFor(chain, taskId, shape.step, true).catch(err => this.h.log.warn({ taskId, step: shape.step, err: (err as Error).message }, 'could not tape the announced step'))
    this.h.log.info({ taskId, step: shape.step, from }, 'a dispute is announced: taping the step now')
    return { end: 'preparing' }
  }

  /** One request of the challenger (off chain). */
  async answer (req: DisputeRequest, from: string): Promise<DisputeResponse> {
    if (this.h.faults.silent) { this.h.log.warn({ disputeId: req.d, from }, 'FAULT silent: not answering a dispute request'); return { err: SILENT } }
    if (req.prepare != null) return await this.prepare(req.prepare.task, req.prepare.step, from)
    const s = await this.session(req.d)
    // one move at a time per dispute
    const run = s.queue.then(async () => await this.answerIn(s, req))
    s.queue = run.catch(() => {})
    return await run
  }

  private async answerIn (s: Session, req: DisputeRequest): Promise<DisputeResponse> {
    if (s.ended != null) return { end: s.ended }
    if (req.hello === true) return { m: s.offChainFirst ?? s.first }
    const signed = req.m!
    const key = hashHex(signed)
    const cached = s.answers.get(key)
    if (cached != null) return cached
    let msg
    try { msg = verifySigned(signed, s.challenger, verify, s.ctx) } catch (err) { return { err: `rejected: ${(err as Error).message}` } }
    if (!s.sent.has(toHex(msg.prev))) return { err: 'that message answers nothing we sent' }
    const res = await this.play(s, signed, false)
    s.answers.set(key, res)
    return res
  }

  /** Our answer to a verified challenger message: off chain, or on chain when it was forced on us. */
  private async play (s: Session, signed: Signed, onChain: boolean): Promise<DisputeResponse> {
    const chain = await this.h.chain()
    const msg = verifySigned(signed, s.challenger, verify, s.ctx)
    const r = s.seg !== undefined && msg.t === 'open'
      ? await this.onOpen(s, chain, msg, signed)
      : s.game?.respond(msg, signed) ?? { error: 'open a step of the segment first' }
    if ('error' in r) return { err: r.error }
    if (r.claim != null) {
      const out = await this.h.adjudicate(chain, s.disputeId, r.claim)
      s.ended = `defender claim ${r.claim.kind}: ${out}`
      return { end: s.ended }
    }
    const reply = r.reply!
    if (onChain) await chain.answerMove(s.disputeId, encodeSigned(reply))
    s.sent.add(hashHex(reply))
    s.last = { theirs: signed, mine: reply, at: Date.now() }
    return { m: reply }
  }

  /**
   * A segment dispute's opening: the step it names is taped (with our faults,
   * as for a one-step dispute) and committed as message 2; a second opening
   * of another step, or one disputing a root we signed, is a badOpen claim.
   */
  private async onOpen (s: Session, chain: ChainClient, msg: Msg, signed: Signed): Promise<{ reply?: Signed, claim?: Claim } | { error: string }> {
    const r = s.seg!.onOpen(msg, signed)
    if ('ignore' in r) return { error: r.ignore }
    if ('claim' in r) return { claim: r.claim }
    // one step game per dispute, even when the opening comes off chain and forced on chain at once (one signed commit)
    s.stepGame ??= this.tapeFor(chain, s.taskId, r.step).then(({ tape, proof }) => makeDefender({
      disputeId: s.disputeId, ctx: s.ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair, lie: this.h.faults.lie, program: s.program, opening: r.opening
    }))
    s.stepGame.catch(() => { s.stepGame = undefined })
    s.game = await s.stepGame
    return { reply: s.game.commit() }
  }

  /**
   * One look at the chain while the dispute is open: answer a force on us;
   * force our last message if the challenger has been quiet too long.
   */
  async tick (disputeId: number, d: DisputeInfo): Promise<void> {
    if (this.h.faults.silent || d.status !== 'Open') return
    const s = await this.session(disputeId).catch(() => undefined)
    if (s == null || s.ended != null) return
    const chain = await this.h.chain()
    if (d.force?.to === 'Defender') {
      if (d.force.seq === 0) {
        await chain.answerMove(disputeId, encodeSigned(s.first))
        this.h.log.info({ disputeId }, `the challenger forced our ${s.seg !== undefined ? 'segment' : 'commit'}: answered on chain`)
        return
      }
      const bytes = await chain.disputeLastMove(disputeId)
      if (bytes == null) return
      await s.queue
      await this.play(s, decodeSignedBytes(bytes), true)
      this.h.log.info({ disputeId, seq: d.force.seq }, 'a forced move: answered on chain')
      return
    }
    const last = s.last
    if (d.force != null || last == null) return
    // the challenger answered our force on chain (and perhaps nowhere else): play its answer
    if (d.nextSeq === decodeMsg(last.mine.m, s.ctx.segmented).seq + 2) {
      const bytes = await chain.disputeLastMove(disputeId)
      const theirs = bytes == null ? undefined : decodeSignedBytes(bytes)
      if (theirs != null && !s.answers.has(hashHex(theirs))) {
        await s.queue
        const res = await this.play(s, theirs, false)
        s.answers.set(hashHex(theirs), res)
        return
      }
    }
    if (Date.now() - last.at < this.h.forceAfterMs) return
    if (s.forced === last.mine) return
    s.forced = last.mine
    try {
      const r = await chain.forceMove(disputeId, last.theirs == null ? new Uint8Array() : encodeSigned(last.theirs), encodeSigned(last.mine))
      this.h.log.info({ disputeId, seq: r.seq, due: r.due }, 'the challenger is quiet: our last message forced on chain')
    } catch (err) {
      this.h.log.debug({ disputeId, err: (err as Error).message }, 'force_move refused')
    }
  }
}
