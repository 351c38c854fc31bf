// How fast gossip is taken in, per topic: a token bucket per message author
// (the signer, whoever relays it) and, for a topic that takes anything
// well-formed from anyone (`announce`), one for the whole topic. gossipsub
// has no rate of its own: a message that passed its checks was relayed as
// fast as its author signed them, each costing every peer its decode, its
// check (chain queries on protocol topics), a relay to its mesh and a place
// in the message log.
//
// Over its author's rate, a message is refused without relaying it. Who pays
// is gossipsub's scoring: an author sending its own flood to us is the only
// sender we can blame, and its REJECT counts against it (P4: graylisted,
// then hung up on, node/p2p/graylist.ts); a relay's copy over the rate is
// IGNOREd (no penalty: an honest relay that took it a moment earlier, under
// its own count, is not at fault). A topic's own rate can only IGNORE: its
// messages' authors may be keys made for one message each, and a relay of
// theirs is indistinguishable from their sender.

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
/** authors remembered (least recently seen forgotten first; a forgotten one starts with a full bucket) */
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
  private readonly authors: Buckets
  private readonly topics = new Map<string, Buckets>()

  constructor (author: Rate = AUTHOR_RATE, private readonly now: () => number = Date.now) {
    this.authors = new Buckets(author, MAX_BUCKETS)
  }

  /** Gives `topic` a rate of its own (a free-form topic). */
  limitTopic (topic: string, rate: Rate): void { this.topics.set(topic, new Buckets(rate, 1)) }

  /** Counts a message of `author` on `topic`: 'ok', or which rate it is over. */
  take (topic: string, author: string | undefined): RateVerdict {
    const now = this.now()
    // the author's bucket first: an author over its rate does not use up the topic's
    if (author !== undefined && !this.authors.take(topic + '\n' + author, now)) return 'author'
    const t = this.topics.get(topic)
    if (t !== undefined && !t.take('', now)) return 'topic'
    return 'ok'
  }
}
