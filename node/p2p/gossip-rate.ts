// How fast gossip is taken in, per topic: a token bucket per message author
// (the signer, whoever relays it) and, for a topic that takes anything
// well-formed from anyone (`announce`), one for the whole topic. gossipsub
// has no rate of its own: a message that passed its checks was relayed as
// fast as its author signed them, each costing every peer its decode, its
// check (chain queries on protocol topics), a relay to its mesh and a place
// in the message log.
//
// Over its author's rate, a message is IGNOREd: not delivered, not relayed.
// Not REJECTed: gossipsub penalises every peer that forwards a message it
// REJECTed (P4 on each duplicate's sender), and an honest relay that took it
// a moment earlier, under its own count, would pay for the flood (measured:
// honest peers hung up on each other). The one sender we can blame is the
// author sending its own flood to us: that costs it through gossipsub's
// application score (P5, FloodPenalties below), which is its own and no
// forwarder's: graylisted, then hung up on (node/p2p/graylist.ts). A topic's
// own rate only IGNOREs: its messages' authors may be keys made for one
// message each, and a relay of theirs cannot be told from their sender.

export interface Rate {
  /** messages at once */
  burst: number
  /** messages a second after the burst */
  perSecond: number
}

/**
 * One author on one topic. A node authors a few messages per task it works
 * on (an announcement, a proof, a verdict, a dispute's phases): a submitter
 * posting a batch of tasks in one block stays far under the burst.
 */
export const AUTHOR_RATE: Rate = { burst: 100, perSecond: 10 }
/** a free-form topic as a whole (operators' and tests' `announce`) */
export const OPEN_TOPIC_RATE: Rate = { burst: 200, perSecond: 50 }
/**
 * authors remembered per topic (least recently seen forgotten first; a forgotten one starts with a
 * full bucket). Per topic: on `announce` any key may author, and messages signed by a key made for
 * each, over the topic's rate and dropped without a penalty, forgot every other author's bucket
 * when the topics shared one table: a registered author's flood on a protocol topic was taken at a
 * burst per 4,096 such messages, not at its rate.
 */
const MAX_BUCKETS = 4096

export type RateVerdict = 'ok' | 'author' | 'topic'

interface Bucket { tokens: number, at: number }

class Buckets {
  private readonly map = new Map<string, Bucket>()
  constructor (private readonly rate: Rate, private readonly max: number) {}

  /** Takes a token of `key`'s bucket: false when it has none left. */
  take (key: string, now: number): boolean {
    const b = this.map.get(key) ?? { tokens: this.rate.burst, at: now }
    this.map.delete(key)
    b.tokens = Math.min(this.rate.burst, b.tokens + Math.max(0, now - b.at) * this.rate.perSecond / 1000)
    b.at = now
    const ok = b.tokens >= 1
    if (ok) b.tokens -= 1
    this.map.set(key, b) // most recently seen last
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string)
    return ok
  }
}

export class GossipRate {
  private readonly authors = new Map<string, Buckets>()
  private readonly topics = new Map<string, Buckets>()

  constructor (private readonly author: Rate = AUTHOR_RATE, private readonly now: () => number = Date.now) {}

  /** Gives `topic` a rate of its own (a free-form topic). */
  limitTopic (topic: string, rate: Rate): void { this.topics.set(topic, new Buckets(rate, 1)) }

  /** Counts a message of `author` on `topic`: 'ok', or which rate it is over. */
  take (topic: string, author: string | undefined): RateVerdict {
    const now = this.now()
    // the author's bucket first: an author over its rate does not use up the topic's
    if (author !== undefined) {
      let a = this.authors.get(topic)
      if (a === undefined) this.authors.set(topic, a = new Buckets(this.author, MAX_BUCKETS))
      if (!a.take(author, now)) return 'author'
    }
    const t = this.topics.get(topic)
    if (t !== undefined && !t.take('', now)) return 'topic'
    return 'ok'
  }
}

/**
 * What each message over its author's rate costs that author when it sends
 * it to us itself, off its application score: four take a peer with no other
 * score under the graylist threshold (-80), eight one with the most a peer
 * earns (+75). It decays as an invalid message's does (×0.99 a second).
 */
export const FLOOD_PENALTY = 25
const PENALTY_DECAY_PER_S = 0.99
/** peers whose penalty is remembered (the smallest forgotten first) */
const MAX_PENALISED = 1024

/** Application-score penalties for flooding, by peer id (gossipsub's appSpecificScore adds them). */
export class FloodPenalties {
  private readonly m = new Map<string, { value: number, at: number }>()
  constructor (private readonly now: () => number = Date.now) {}

  add (peer: string, amount = FLOOD_PENALTY): void {
    this.m.set(peer, { value: this.of(peer) + amount, at: this.now() })
    if (this.m.size > MAX_PENALISED) {
      let least: string | undefined
      for (const id of this.m.keys()) if (least === undefined || this.of(id) < this.of(least)) least = id
      if (least !== undefined) this.m.delete(least)
    }
  }

  /** the penalty now (0 for a peer never penalised) */
  of (peer: string): number {
    const p = this.m.get(peer)
    return p === undefined ? 0 : p.value * PENALTY_DECAY_PER_S ** ((this.now() - p.at) / 1000)
  }
}
