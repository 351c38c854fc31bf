import type { DisputeResult } from '../../actors/ports.js'
import { bytesEqual } from '../../protocols/commit/merkle.js'
import {
  decodeSignedBytes, encodeSigned, equivocationClaim, moveHash, narrowingOf, verifySigned,
  type ChallengerGame, type Claim, type DisputeContext, type Msg, type Signed
} from '../../protocols/dispute/index.js'
import type { ChainClient, DisputeInfo } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { Peer } from '../peer.js'
import { verify } from './dispute-context.js'
import type { DisputeRecord } from './dispute-record.js'
import { request, type DisputeRequest } from './transport.js'

// The challenger playing an opened dispute (challenger.ts opens it): the pure
// game over /proofswarm/dispute/3.0.0 with the defender's peer, a move forced
// on chain when the defender is quiet, a move the defender forced on us
// answered on chain, and the dispute followed on chain to its end.

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

/** What playing a dispute uses of the dispute service. */
export interface PlayHost {
  log: Logger
  peer: Peer
  forceAfterMs: number
  adjudicate: (chain: ChainClient, disputeId: number, claim: Claim) => Promise<string>
  followToEnd: (disputeId: number, me: 'challenger' | 'defender') => Promise<DisputeResult>
  maybeClaimTimeout: (chain: ChainClient, disputeId: number, d: DisputeInfo, me: 'challenger' | 'defender') => Promise<boolean>
  /** dispute id → how this node ended it */
  endings: Map<number, string>
  ongoing: Map<number, DisputeRecord>
  finished: DisputeRecord[]
}

/** What came from the defender: off chain, or on chain (then `forced`: it was forced on us and we answer on chain). */
export interface Incoming { signed: Signed, forced: boolean }

/** A segment dispute's opening (our answer to the defender's segment) and the step game, built while it travels. */
export type SegmentOpening = { send: Signed, game: Promise<ChallengerGame> } | { fail: string }

/** An opened dispute as the challenger plays it. */
export interface PlayOut {
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

export class ChallengerPlay {
  /** when the challenger last read its dispute on chain */
  private chainCheckedAt = 0
  /** dispute id → the defender's messages we heard, in order (an equivocation's claim draws on them) */
  private readonly heardBy = new Map<number, Signed[]>()
  /** dispute id → our moves, in order (a force on us at an earlier seq is answered with ours there) */
  private readonly sentBy = new Map<number, Signed[]>()

  constructor (private readonly h: PlayHost) {}

  /**
   * Plays an opened dispute off chain to its claim, then follows it on chain to
   * its end. A segment dispute (`open`) starts with the defender's segment,
   * answered by our opening, before the step game (`game`, built meanwhile).
   */
  async playOut (o: PlayOut): Promise<DisputeResult> {
    const { t0, chain, taskId, disputeId, ctx, defenderKey, defenderPeer } = o
    let game = o.game
    let moves = 0
    let sent: Signed | undefined
    let opening: { theirs: Signed, mine: Signed } | undefined
    const pending = (): { theirs: Signed, mine: Signed } | undefined => game?.pending ?? opening
    const heard: Msg[] = []
    const heardSigned: Signed[] = []
    this.heardBy.set(disputeId, heardSigned)
    const sentSigned: Signed[] = []
    this.sentBy.set(disputeId, sentSigned)
    const live: DisputeRecord = { disputeId, role: 'challenger', ms: 0, moves: 0, winner: '', reason: 'in progress', taskId, step: o.step, narrowing: [], open: true }
    this.h.ongoing.set(disputeId, live)
    try {
      let incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, undefined, false)
      if (o.open !== undefined && incoming != null) {
        heard.push(verifySigned(incoming.signed, defenderKey, verify, ctx))
        heardSigned.push(incoming.signed)
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
          sentSigned.push(sent)
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
        heardSigned.push(incoming.signed)
        moves++
        Object.assign(live, { ms: Date.now() - t0, moves, narrowing: narrowingOf(heard) })
        const next = game.onMessage(msg, incoming.signed)
        if ('claim' in next) { await this.h.adjudicate(chain, disputeId, next.claim); break }
        if ('fail' in next) { this.h.log.error({ disputeId, why: next.fail }, 'the challenger cannot continue the game'); this.h.endings.set(disputeId, `challenger stuck: ${next.fail}`); break }
        if ('demand' in next) {
          // an unusable first message (a commit of another step, a refusal): demanded on chain, where only the real one is taken
          this.h.log.warn({ disputeId }, 'the defender\'s commit is of no use: demanding it on chain')
          incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, undefined, true)
          continue
        }
        // the same move again: the defender's answer was of no use (not what we asked for, a refusal); only the chain can make it answer
        const repeated = next.send === sent
        sent = next.send
        if (!repeated) sentSigned.push(sent)
        if (incoming.forced && !repeated) await chain.answerMove(disputeId, encodeSigned(next.send))
        if (!repeated) moves++
        incoming = await this.ask(chain, ctx, pending, defenderKey, defenderPeer, next.send, repeated)
      }
    } catch (err) {
      this.h.log.warn({ disputeId, err: (err as Error).message }, 'the dispute game stopped early; following it on chain')
    }
    const result = await this.h.followToEnd(disputeId, 'challenger').finally(() => { this.h.ongoing.delete(disputeId); this.heardBy.delete(disputeId); this.sentBy.delete(disputeId) })
    this.h.finished.push({ disputeId, role: 'challenger', ms: Date.now() - t0, moves, winner: result.winner, reason: result.reason ?? '', taskId, step: o.step, narrowing: narrowingOf(heard) })
    this.h.log.info({ taskId, disputeId, winner: result.winner, reason: result.reason, ms: Date.now() - t0 }, 'dispute over (challenger)')
    return result
  }

  /**
   * The defender forced `forced` where we had answered another message of it
   * (`mine` continues that one): the lie claim from the two, adjudicated.
   */
  private async equivocated (chain: ChainClient, ctx: DisputeContext, defenderKey: Uint8Array, mine: Signed, forced: Signed): Promise<void> {
    const disputeId = ctx.disputeId
    const heard = this.heardBy.get(disputeId) ?? []
    const prev = verifySigned(mine, chain.pair.publicKey, verify, ctx).prev
    const answered = heard.find(s => bytesEqual(moveHash(s), prev))
    const claim = answered === undefined ? undefined : equivocationClaim(answered, forced, heard, { ctx, defender: defenderKey, verify })
    if (claim === undefined) {
      this.h.log.error({ disputeId }, 'the defender forced a message our move does not answer, and we hold nothing it contradicts')
      this.h.endings.set(disputeId, 'challenger stuck: the defender forced a message our move does not answer')
      return
    }
    this.h.log.warn({ disputeId }, 'the defender forced another message than the one we answered: claiming the lie')
    await this.h.adjudicate(chain, disputeId, claim)
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
        // the defender forced one of its messages we had answered (its previous one while ours was on the way,
        // or an earlier one): our move there is the answer, on chain
        const owed = d.force?.to === 'Challenger' ? d.force.seq : undefined
        if (mine !== undefined && owed !== undefined && owed <= mySeq) {
          const ours = (this.sentBy.get(disputeId) ?? []).find(x => verifySigned(x, chain.pair.publicKey, verify, ctx).seq === owed) ?? mine
          const last = await chain.disputeLastMove(disputeId)
          const forcedMsg = last == null ? undefined : decodeSignedBytes(last)
          // unless it forced another message than the one ours answers: then the two are its lie
          if (forcedMsg !== undefined && !bytesEqual(verifySigned(ours, chain.pair.publicKey, verify, ctx).prev, moveHash(forcedMsg))) {
            await this.equivocated(chain, ctx, defenderKey, ours, forcedMsg)
            return null
          }
          await chain.answerMove(disputeId, encodeSigned(ours))
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
