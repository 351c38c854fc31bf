import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hexToU8a } from '@polkadot/util'
import { toHex } from '../../protocols/commit/merkle.js'
import { decodeMsg, decodeSignedBytes, encodeSigned, moveHash, verifySigned, type Claim, type DefenderGame, type DisputeContext, type Msg, type SegmentDefender, type Signed } from '../../protocols/dispute/index.js'
import type { ProofOfLearning } from '../../protocols/pol/proof.js'
import { validateProgram, type TaskProgram } from '../../protocols/program/program.js'
import type { ChainClient, DisputeInfo } from '../chain/client.js'
import { contextOf, verify } from './dispute-context.js'
import { disputeShapeOf } from './dispute-shape.js'
import { DefenderRuns, type RunsHost } from './defender-runs.js'
import { makeDefender } from './players.js'
import { segmentDefenderOf, shortSegmentOf } from './segment-defence.js'
import type { TapeFile } from '../engine/tape-file.js'
import { SILENT, type DisputeRequest, type DisputeResponse } from './transport.js'

// The defender's side of a dispute (docs/disputes.md, "Node side"): it tapes
// the disputed step as soon as the dispute is opened, then answers the
// challenger's signed messages off chain. It forces its last message on chain
// when the challenger goes quiet (its commit if the challenger never opens),
// and answers on chain any move the challenger forces on it. Its tapes and
// segment re-runs are defender-runs.ts's.

export interface DefenderHost extends RunsHost {
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
  /** our tapes of disputed steps and re-runs of disputed segments */
  private readonly runs: DefenderRuns

  constructor (private readonly h: DefenderHost) {
    this.runs = new DefenderRuns(h)
  }

  /** The run's tape of on-chain step `step` of task `taskId` (DefenderRuns.tapeFor). */
  async tapeFor (chain: ChainClient, taskId: number, step: number, announced = false): Promise<{ tape: TapeFile, proof: ProofOfLearning }> {
    return await this.runs.tapeFor(chain, taskId, step, announced)
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
    const taskFile = join(this.runs.runDir(taskId), 'task.json')
    const program = existsSync(taskFile) ? validateProgram(JSON.parse(readFileSync(taskFile, 'utf8'))) : undefined
    const base = { disputeId, taskId, ctx, challenger: hexToU8a(d.challenger), program, answers: new Map(), queue: Promise.resolve() }
    if (shape.kind === 'segment') {
      // a segment dispute: disputed_step is the segment; we sign our roots inside it, and tape the step the challenger opens
      const proof = await this.runs.proofOf(chain, taskId, rootEvery)
      const inside = await this.runs.segmentInside(chain, taskId, d.disputedStep)
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

  /** One request of the challenger (off chain). */
  async answer (req: DisputeRequest, from: string): Promise<DisputeResponse> {
    if (this.h.faults.silent) { this.h.log.warn({ disputeId: req.d, from }, 'FAULT silent: not answering a dispute request'); return { err: SILENT } }
    if (req.prepare != null) return await this.runs.prepare(req.prepare.task, req.prepare.step, from)
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
