import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { KeyringPair } from '@polkadot/keyring/types'
import { hexToU8a } from '@polkadot/util'
import type { DisputeResult } from '../../actors/ports.js'
import { bytesEqual } from '../../protocols/commit/merkle.js'
import {
  decodeSignedBytes, encodeSigned, moveHash, narrowingOf, verifySigned,
  type ChallengerGame, type Claim, type DisputeContext, type Msg, type NarrowStep, type Signed
} from '../../protocols/dispute/index.js'
import { rootAtStep, rootEveryOfProof } from '../../protocols/pol/proof.js'
import { committedStep, segmentOfStep } from '../../protocols/pol/segments.js'
import type { ChainClient, DisputeInfo, TaskInfo } from '../chain/client.js'
import type { TapeJob } from '../engine/protocol.js'
import type { TapeFile } from '../engine/tape-file.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import type { ShardService } from '../shards/index.js'
import { contextOf, verify } from './dispute-context.js'
import { disputeOfStep } from './dispute-shape.js'
import { makeChallenger, nanFacts } from './players.js'
import { ensureReplayDir } from './replay-dir.js'
import { nanStepOf, segmentChallengerOf, segmentDisputeError, segmentEndAgrees, segmentPlanOf, type SegmentPlan } from './segment-challenge.js'
import { request, type DisputeRequest } from './transport.js'

// The challenger's side of a dispute (docs/disputes.md, "Node side"): it
// tapes the disputed step (or, with a root every m > 1 steps, replays the
// segment) in a child process, opens the dispute on chain only when it can
// win, finds the defender's peer id on chain and plays the pure game over
// /proofswarm/dispute/3.0.0, forcing a move on chain when the defender is
// quiet and answering a move the defender forced on it.

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

export interface DisputeRecord {
  disputeId: number
  role: 'challenger' | 'defender'
  ms: number
  moves: number
  winner: string
  reason: string
  taskId?: number
  step?: number
  narrowing?: NarrowStep[]
  open?: boolean
}

/** What the challenger uses of the dispute service. */
export interface ChallengerHost {
  log: Logger
  peer: Peer
  shards: ShardService
  chain: () => Promise<ChainClient>
  dataDir: string
  forceAfterMs: number
  tapeInChild: (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>) => Promise<TapeFile>
  segmentRootsInChild: (runDir: string, first: number, length: number, faults: Pick<TapeJob, 'faults'>['faults']) => Promise<string[]>
  adjudicate: (chain: ChainClient, disputeId: number, claim: Claim) => Promise<string>
  followToEnd: (disputeId: number, me: 'challenger' | 'defender') => Promise<DisputeResult>
  maybeClaimTimeout: (chain: ChainClient, disputeId: number, d: DisputeInfo, me: 'challenger' | 'defender') => Promise<boolean>
  /** dispute id → how this node ended it */
  endings: Map<number, string>
  ongoing: Map<number, DisputeRecord>
  finished: DisputeRecord[]
}

/** What came from the defender: off chain, or on chain (then `forced`: it was forced on us and we answer on chain). */
interface Incoming { signed: Signed, forced: boolean }

/** A segment dispute's opening (our answer to the defender's segment) and the step game, built while it travels. */
type SegmentOpening = { send: Signed, game: Promise<ChallengerGame> } | { fail: string }

/** An opened dispute as the challenger plays it. */
interface PlayOut {
  t0: number
  chain: ChainClient
  taskId: number
  disputeId: number
  ctx: DisputeContext
  defenderKey: Uint8Array
  defenderPeer: string
  /** the on-chain step (a segment dispute: its first step) for the records */
  step: number
  /** the step game (one-step dispute) */
  game?: ChallengerGame
  /** a segment dispute: opens a step of the defender's segment */
  open?: (incoming: Incoming) => Promise<SegmentOpening>
}

export class Challenger {
  /** when the challenger last read its dispute on chain */
  private chainCheckedAt = 0

  constructor (private readonly h: ChallengerHost) {}

  /**
   * A verifier (against the solver) or a whistleblower (against a verifier's
   * verdict: played as a SolverProof dispute against the task's solver, see
   * docs/disputes.md) disputes 1-based engine step `step`.
   */
  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    const t0 = Date.now()
    if (step == null || !Number.isInteger(step) || step < 1) throw new Error(`task ${taskId}: no disputed step to challenge`)
    const chain = await this.h.chain()
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist on chain`)
    if (task.solver == null) throw new Error(`task ${taskId} has no solver`)
    if (against === 'verifier') this.h.log.info({ taskId, step }, 'a verdict accepted a wrong step: challenging the solver\'s proof (a verdict is disputed through the proof it judged; verifiers that accepted the step are slashed with the solver)')
    const defenderNode = await chain.node(task.solver)
    if (defenderNode == null) throw new Error(`the solver ${task.solver} is not registered`)
    const defenderPeer = Buffer.from(defenderNode.peerId.replace(/^0x/, ''), 'hex').toString('utf8')
    const rootEvery = await chain.rootEvery(taskId)
    // with a root every m > 1 steps every step is inside a segment but a diverged proof's last, disputed alone
    const { disputedStep: chainStep, shape } = disputeOfStep(task, rootEvery, step)
    if (shape.kind === 'segment') return await this.challengeSegment(t0, chain, taskId, task, rootEvery, defenderPeer, step)
    // announce the step: the defender tapes it while we tape ours, so the game can start as soon as the dispute is opened
    void request(this.h.peer.host, defenderPeer, { d: 0, prepare: { task: taskId, step: chainStep } }, 5_000).catch(() => {})
    const runDir = join(this.h.dataDir, 'verify', String(taskId))
    const { program, proof } = await ensureReplayDir(this.h.shards, taskId, task, runDir, step, defenderPeer)
    if (rootEveryOfProof(proof) !== rootEvery) throw new Error(`proof.json of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${rootEvery}`)
    const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const tape = await this.h.tapeInChild(runDir, step, join(dir, `task-${taskId}-step-${step}-challenger.cbor`), { datasetProofs: true })
    // only dispute what we can win: the pre-state is agreed, and the post-state is not, or the
    // step holds a NaN the defender committed, or a diverged step does not diverge as it says
    const pre = rootEvery > 1 ? rootAtStep(proof, step - 1) : proof.stateRoots[step - 1]
    if (tape.stateRootBefore !== pre) throw new Error(`our state before step ${step} differs from the proof's: dispute an earlier step`)
    const nan = nanFacts(tape, task.divergence != null && step - 1 === task.stepCount ? task.divergence : undefined)
    if (nan.divergence !== undefined && !nan.wrong) throw new Error(`step ${step} diverges where the proof says: nothing to dispute`)
    if (!nan.wrong && tape.stateRootAfter === proof.stateRoots[step]) throw new Error(`step ${step} replays to the committed root: nothing to dispute`)
    const disputeId = Number(await chain.openDispute(taskId, task.solver, 'SolverProof', chainStep))
    this.h.log.info({ taskId, disputeId, step, chainStep, defender: defenderPeer }, 'dispute opened on chain')
    // a one-step dispute: never the segment context, whatever m
    const ctx = contextOf(chain, taskId, disputeId)
    const game = makeChallenger({
      disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: hexToU8a(task.solver), program, nan,
      ...(shape.spacing !== undefined ? { spacing: shape.spacing } : {})
    })
    return await this.playOut({ t0, chain, taskId, disputeId, ctx, defenderKey: hexToU8a(task.solver), defenderPeer, step: step - 1, game })
  }

  /**
   * The same with a root every m > 1 steps (docs/disputes.md "Segments"): the
   * step lies in segment j, which we replay; we open j on chain only if our
   * replay agrees with leaf j and not with leaf j + 1. The defender's first
   * message is its signed segment; we open its first transition whose
   * post-root differs from ours and tape that step while the defender tapes it.
   */
  private async challengeSegment (
    t0: number, chain: ChainClient, taskId: number, task: TaskInfo, rootEvery: number, defenderPeer: string, step: number
  ): Promise<DisputeResult> {
    const runDir = join(this.h.dataDir, 'verify', String(taskId))
    const { j } = segmentOfStep(step - 1, task.stepCount, rootEvery)
    void request(this.h.peer.host, defenderPeer, { d: 0, prepare: { task: taskId, step: j } }, 5_000).catch(() => {})
    const { program, proof } = await ensureReplayDir(this.h.shards, taskId, task, runDir, committedStep(j, task.stepCount, rootEvery) + 1, defenderPeer)
    if (rootEveryOfProof(proof) !== rootEvery) throw new Error(`proof.json of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${rootEvery}`)
    const plan = segmentPlanOf(proof, step)
    const own = await this.h.segmentRootsInChild(runDir, plan.first, plan.length, { ops: [], weights: [] })
    const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const tapeOf = async (s: number): Promise<TapeFile> => await this.h.tapeInChild(runDir, s, join(dir, `task-${taskId}-step-${s}-challenger.cbor`), { datasetProofs: true })
    // every root agrees: what is left to dispute is a NaN the defender committed in the step we were asked about
    const nanTape = own[0] === proof.stateRoots[plan.j].replace(/^0x/, '') && segmentEndAgrees(plan, proof, own) ? await this.nanStepTape(tapeOf, step, plan, own) : undefined
    const nanAt = nanTape === undefined ? undefined : step - 1
    const no = segmentDisputeError(plan, proof, own, nanAt)
    if (no !== undefined) throw new Error(no)
    const disputeId = Number(await chain.openDispute(taskId, task.solver!, 'SolverProof', plan.j))
    this.h.log.info({ taskId, disputeId, step, segment: plan.j, steps: `${plan.first + 1}…${plan.first + plan.length}`, nanAt, defender: defenderPeer }, 'segment dispute opened on chain')
    const ctx = contextOf(chain, taskId, disputeId, rootEvery)
    const defenderKey = hexToU8a(task.solver!)
    const sc = segmentChallengerOf({ disputeId, ctx, pair: chain.pair as KeyringPair, defender: defenderKey, plan, proof, own, nanAt })
    const open = async (incoming: Incoming): Promise<SegmentOpening> => {
      const opened = sc.onSegment(verifySigned(incoming.signed, defenderKey, verify, ctx), incoming.signed)
      if ('fail' in opened) return opened
      this.h.log.info({ disputeId, segment: plan.j, step: opened.step, nan: opened.step === nanAt }, 'opening the first step of the defender\'s segment whose post-root differs from our replay (or that holds a NaN)')
      const game = (async () => {
        const s = opened.step + 1
        const tape = opened.step === nanAt ? nanTape! : await tapeOf(s)
        if (tape.stateRootBefore !== own[opened.step - plan.first]) throw new Error(`our tape of step ${s} does not start from our replay of the segment`)
        return makeChallenger({
          disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: defenderKey, program,
          nan: nanFacts(tape), segment: opened.segment
        })
      })()
      game.catch(() => {})
      return { send: opened.send, game }
    }
    return await this.playOut({ t0, chain, taskId, disputeId, ctx, defenderKey, defenderPeer, step: plan.first, open })
  }

  /**
   * Our tape of 1-based `step` when it holds a NaN the defender committed
   * (its pre-state agreed with our replay of the segment), else undefined:
   * an honest run commits none, so that transition is disputed though every
   * root of the segment agrees (docs/disputes.md "Segments").
   */
  private async nanStepTape (tapeOf: (s: number) => Promise<TapeFile>, step: number, plan: SegmentPlan, own: readonly string[]): Promise<TapeFile | undefined> {
    const tape = await tapeOf(step)
    return nanStepOf(tape, plan, own) === undefined ? undefined : tape
  }

  /**
   * Plays an opened dispute off chain to its claim, then follows it on chain to
   * its end. A segment dispute (`open`) starts with the defender's segment,
   * answered by our opening, before the step game (`game`, built meanwhile).
   */
  private async playOut (o: PlayOut): Promise<DisputeResult> {
    const { t0, chain, taskId, disputeId, ctx, defenderKey, defenderPeer } = o
    let game = o.game
    let moves = 0
    let sent: Signed | undefined
    let opening: { theirs: Signed, mine: Signed } | undefined
    const pending = (): { theirs: Signed, mine: Signed } | undefined => game?.pending ?? opening
    const heard: Msg[] = []
    const live: DisputeRecord = { disputeId, role: 'challenger', ms: 0, moves: 0, winner: '', reason: 'in progress', taskId, step: o.step, narrowing: [], open: true }
    this.h.ongoing.set(disputeId, live)
    try {
      let incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, undefined, false)
      if (o.open !== undefined && incoming != null) {
        heard.push(verifySigned(incoming.signed, defenderKey, verify, ctx))
        moves++
        let r = await o.open(incoming)
        if ('fail' in r) {
          // a segment we cannot use (another segment, another length): only the chain, which takes nothing else, can make it answer
          this.h.log.warn({ disputeId, why: r.fail }, 'the defender\'s segment is of no use: demanding it on chain')
          incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, undefined, true)
          if (incoming != null) r = await o.open(incoming)
        }
        if ('fail' in r) {
          this.h.log.error({ disputeId, why: r.fail }, 'the challenger cannot open a step of the segment')
          this.h.endings.set(disputeId, `challenger stuck: ${r.fail}`)
          incoming = null
        } else if (incoming != null) {
          sent = r.send
          opening = { theirs: incoming.signed, mine: sent }
          if (incoming.forced) await chain.answerMove(disputeId, encodeSigned(sent))
          moves++
          const [g, next] = await Promise.all([r.game, this.ask(chain, ctx, pending, defenderKey, defenderPeer, sent, false)])
          game = g
          incoming = next
        }
      }
      while (incoming != null && game !== undefined) {
        const msg = verifySigned(incoming.signed, defenderKey, verify, ctx)
        heard.push(msg)
        moves++
        Object.assign(live, { ms: Date.now() - t0, moves, narrowing: narrowingOf(heard) })
        const next = game.onMessage(msg, incoming.signed)
        if ('claim' in next) { await this.h.adjudicate(chain, disputeId, next.claim); break }
        if ('fail' in next) { this.h.log.error({ disputeId, why: next.fail }, 'the challenger cannot continue the game'); this.h.endings.set(disputeId, `challenger stuck: ${next.fail}`); break }
        // the same move again: the defender's answer was of no use (not what we asked for, a refusal); only the chain can make it answer
        const repeated = next.send === sent
        sent = next.send
        if (incoming.forced && !repeated) await chain.answerMove(disputeId, encodeSigned(next.send))
        if (!repeated) moves++
        incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, next.send, repeated)
      }
    } catch (err) {
      this.h.log.warn({ disputeId, err: (err as Error).message }, 'the dispute game stopped early; following it on chain')
    }
    const result = await this.h.followToEnd(disputeId, 'challenger').finally(() => this.h.ongoing.delete(disputeId))
    this.h.finished.push({ disputeId, role: 'challenger', ms: Date.now() - t0, moves, winner: result.winner, reason: result.reason ?? '', taskId, step: o.step, narrowing: narrowingOf(heard) })
    this.h.log.info({ taskId, disputeId, winner: result.winner, reason: result.reason, ms: Date.now() - t0 }, 'dispute over (challenger)')
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
    chain: ChainClient, ctx: DisputeContext, pending: () => { theirs: Signed, mine: Signed } | undefined, defenderKey: Uint8Array, peerId: string,
    mine: Signed | undefined, forceNow: boolean
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
        if (await this.h.maybeClaimTimeout(chain, disputeId, d, 'challenger')) return null
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
        if (!forced && d.force == null && Date.now() - since > this.h.forceAfterMs) {
          forced = true
          const p = pending()
          try {
            const r = await chain.forceMove(
              disputeId, p === undefined ? new Uint8Array() : encodeSigned(p.theirs), p === undefined ? new Uint8Array() : encodeSigned(p.mine)
            )
            this.h.log.info({ disputeId, seq: r.seq, due: r.due }, 'the defender is quiet: our move forced on chain')
          } catch (err) { this.h.log.warn({ disputeId, err: (err as Error).message }, 'force_move refused') }
        }
      }
      if (forceNow) { await sleep(500); continue }
      try {
        const res = await request(this.h.peer.host, peerId, req, 5_000)
        if (res.m != null) {
          try {
            if (answers(verifySigned(res.m, defenderKey, verify, ctx))) return { signed: res.m, forced: false }
            this.h.log.warn({ disputeId }, 'the defender\'s message does not answer ours')
          } catch (err) { this.h.log.warn({ disputeId, err: (err as Error).message }, 'a defender message failed verification') }
        } else if (res.end != null) { this.h.log.info({ disputeId, end: res.end }, 'the defender ended the game'); return null } else this.h.log.debug({ disputeId, err: res.err }, 'the defender refused; retrying')
      } catch (err) {
        this.h.log.debug({ disputeId, err: (err as Error).message }, 'no answer from the defender; retrying')
      }
      await sleep(1000)
    }
    return null
  }
}
