import { TopicValidatorResult, type GossipSub, type Message } from '@libp2p/gossipsub'
import type { PeerId } from '@libp2p/interface'
import type { Logger } from '../log.js'
import { MAX_GOSSIP_MESSAGE_BYTES } from './limits.js'
import { FloodPenalties, GossipRate, type Rate } from './gossip-rate.js'
import { parseTopicName, topicName } from './topics.js'

// A typed map from gossip topic to handler (Lodestar's layout): each topic has
// a decoder/validator that runs inside gossipsub's validation step, so an
// invalid message is never forwarded and counts against the sender's score
// (gossipsub P4, invalid message deliveries), and a handler for valid ones.

/** What a message's content is worth, beyond its form: REJECT penalises the sender, IGNORE drops it without penalty. */
export type CheckResult = 'accept' | 'reject' | 'ignore'

export interface TopicHandler<T> {
  /** throws on malformed input; the error message is logged with the sender */
  decode: (data: Uint8Array) => T
  /** checks a well-formed message against what this peer knows (the chain); runs inside validation, before forwarding */
  check?: (msg: T, author: string | undefined) => Promise<CheckResult>
  /** `raw`: the message as gossipsub received it (its author's signature: signed-envelope.ts) */
  handle?: (msg: T, from: string, raw: Message) => void | Promise<void>
}

export interface ReceivedMessage {
  topic: string
  from: string
  size: number
  receivedAt: number
  /** decoded message (JSON-able) */
  msg: unknown
}

export interface GossipStats {
  accepted: number
  /** well-formed but not checkable yet (e.g. a task the chain does not show yet): dropped without penalty */
  ignored: number
  rejected: number
  rejectedBy: Record<string, number>
  /** refused for their author's (or their topic's) rate (node/p2p/gossip-rate.ts): from the author itself also counted rejected (and penalised), from relays ignored */
  overRate: number
}

const LOG_CAPACITY = 1000
/** what the message log holds at most, in message bytes (1,000 messages of 64 KiB were 64 MiB) */
const LOG_MAX_BYTES = 4 * 1024 * 1024
/** authors whose first message over their rate was logged (each is logged once while remembered) */
const RATE_LOGGED = 256

export class GossipRouter {
  private readonly handlers = new Map<string, TopicHandler<unknown>>()
  private readonly log: ReceivedMessage[] = []
  private logBytes = 0
  readonly stats: GossipStats = { accepted: 0, ignored: 0, rejected: 0, rejectedBy: {}, overRate: 0 }
  private readonly decoded = new WeakMap<Message, unknown>()
  readonly rate = new GossipRate()
  private readonly rateLogged = new Set<string>()

  /** `penalties`: what flooding costs a peer, read by gossipsub's application score (node/p2p/host.ts appScore) */
  constructor (private readonly pubsub: GossipSub, readonly network: string, private readonly logger: Logger,
    private readonly onResult?: (topic: string, result: 'accept' | 'reject') => void, readonly penalties = new FloodPenalties()) {
    pubsub.addEventListener('message', evt => { void this.onMessage(evt.detail) })
  }

  /**
   * Subscribes to a topic of this network and installs its validator. Every
   * author has a rate on it (gossip-rate.ts AUTHOR_RATE); `topicRate` bounds the
   * topic as a whole, for one whose messages anyone may author (`announce`).
   */
  register<T> (topic: string, handler: TopicHandler<T>, topicRate?: Rate): string {
    const full = topicName(this.network, topic)
    this.handlers.set(full, handler as TopicHandler<unknown>)
    if (topicRate !== undefined) this.rate.limitTopic(full, topicRate)
    this.pubsub.topicValidators.set(full, (from: PeerId, message: Message) => this.validate(full, from, message))
    this.pubsub.subscribe(full)
    return full
  }

  async publish (topic: string, data: Uint8Array): Promise<{ recipients: number }> {
    if (data.length > MAX_GOSSIP_MESSAGE_BYTES) {
      throw new Error(`gossip message of ${data.length} bytes exceeds the ${MAX_GOSSIP_MESSAGE_BYTES}-byte limit; send bulk data over the shard exchange`)
    }
    const full = topicName(this.network, topic)
    const h = this.handlers.get(full)
    if (h != null) h.decode(data) // never publish what peers would reject
    const res = await this.pubsub.publish(full, data)
    return { recipients: res.recipients.length }
  }

  received (opts: { topic?: string, since?: number } = {}): ReceivedMessage[] {
    return this.log.filter(m => (opts.topic == null || m.topic === opts.topic) && (opts.since == null || m.receivedAt >= opts.since))
  }

  private async validate (full: string, from: PeerId, message: Message): Promise<TopicValidatorResult> {
    const h = this.handlers.get(full)
    const reject = (why: string): TopicValidatorResult => {
      this.stats.rejected++
      this.stats.rejectedBy[from.toString()] = (this.stats.rejectedBy[from.toString()] ?? 0) + 1
      this.onResult?.(full, 'reject')
      this.logger.warn({ topic: full, from: from.toString(), size: message.data.length }, `rejected gossip message: ${why}`)
      return TopicValidatorResult.Reject
    }
    if (h == null) return reject('unknown topic')
    if (message.data.length > MAX_GOSSIP_MESSAGE_BYTES) return reject(`oversized (${message.data.length} > ${MAX_GOSSIP_MESSAGE_BYTES} bytes)`)
    // counted before any decode or check (a check may query the chain)
    const signer = message.type === 'signed' ? message.from.toString() : undefined
    const over = this.rate.take(full, signer)
    if (over !== 'ok') {
      this.stats.overRate++
      const direct = over === 'author' && signer === from.toString()
      if (signer !== undefined && !this.rateLogged.has(signer)) {
        this.rateLogged.add(signer)
        if (this.rateLogged.size > RATE_LOGGED) this.rateLogged.delete(this.rateLogged.values().next().value as string)
        this.logger.warn({ topic: full, author: signer, from: from.toString(), over }, direct ? 'a peer publishes gossip faster than its rate: refused and penalised' : 'gossip over its rate: dropped, not relayed')
      }
      if (direct) {
        // its own flood, from itself: the sender is the one to blame, off its application score
        // (a REJECT would cost every relay of the message too); counted with the rejections
        this.penalties.add(signer)
        this.stats.rejected++
        this.stats.rejectedBy[signer] = (this.stats.rejectedBy[signer] ?? 0) + 1
        this.onResult?.(full, 'reject')
      } else this.stats.ignored++
      return TopicValidatorResult.Ignore
    }
    let msg: unknown
    try {
      msg = h.decode(message.data)
    } catch (err) {
      return reject(`malformed: ${(err as Error).message}`)
    }
    if (h.check != null) {
      let verdict: CheckResult
      // a check that cannot complete (chain unreachable) must not penalise an honest sender
      const author = message.type === 'signed' ? message.from.toString() : undefined
      try { verdict = await h.check(msg, author) } catch { verdict = 'ignore' }
      if (verdict === 'reject') return reject('contradicts the chain')
      if (verdict === 'ignore') { this.stats.ignored++; return TopicValidatorResult.Ignore }
    }
    this.decoded.set(message, msg)
    this.stats.accepted++
    this.onResult?.(full, 'accept')
    return TopicValidatorResult.Accept
  }

  private async onMessage (message: Message): Promise<void> {
    const h = this.handlers.get(message.topic)
    if (h == null) return
    const parsed = parseTopicName(this.network, message.topic)
    const from = message.type === 'signed' ? message.from.toString() : 'unknown'
    let msg = this.decoded.get(message)
    if (msg === undefined) {
      try { msg = h.decode(message.data) } catch { return }
    }
    this.log.push({ topic: parsed?.topic ?? message.topic, from, size: message.data.length, receivedAt: Date.now(), msg })
    this.logBytes += message.data.length
    let drop = 0
    while (this.log.length - drop > 1 && (this.log.length - drop > LOG_CAPACITY || this.logBytes > LOG_MAX_BYTES)) this.logBytes -= this.log[drop++].size
    if (drop > 0) this.log.splice(0, drop)
    try {
      await h.handle?.(msg, from, message)
    } catch (err) {
      this.logger.error({ err, topic: message.topic, from }, 'gossip handler failed')
    }
  }
}
