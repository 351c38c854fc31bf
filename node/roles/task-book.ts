import { lpStream } from '@libp2p/utils'
import type { Level } from 'level'
import { decodeMessage, encodeTopicMessage, PROTOCOL_TOPICS, type MessageOf, type ProtocolTopic } from '../../protocols/messages/index.js'
import type { CheckResult } from '../p2p/gossip.js'
import type { Peer } from '../peer.js'
import { getJson, putJson, sublevel } from '../storage/db.js'
import { closeStream } from '../p2p/stream-close.js'
import { envelopeOf, openEnvelope, signEnvelope, type SignedEnvelope } from '../p2p/signed-envelope.js'
import { topicName } from '../p2p/topics.js'
import { noteProgress } from '../p2p/stream-progress.js'

// What this peer has heard about each task over gossip (program and proof
// CIDs, verdicts, disputes), persisted so a restart does not forget. Gossip
// is only a hint: everything taken from here is checked against the chain
// (hashes, roots) before it is used.

export interface TaskRecord {
  taskId: number
  task?: MessageOf<'tasks'>
  /** the task announcement as its submitter's peer signed it: what a neighbour that missed it is given */
  taskSigned?: SignedEnvelope
  proof?: MessageOf<'proofs'>
  verdicts: Array<MessageOf<'verdicts'>>
  disputes: Array<MessageOf<'disputes'>>
  /** what this peer saw on chain about the task (settlement, dispute outcomes), by event name */
  chain?: Record<string, unknown>
  updatedAt: number
}

type Waiter = { taskId: number, pred: (r: TaskRecord) => boolean, resolve: (r: TaskRecord) => void }

/**
 * Checks an announcement against the chain. `author` is the peer that signed
 * the gossip message (undefined for a record relayed by a neighbour).
 */
export type AnnouncementCheck = (topic: ProtocolTopic, msg: MessageOf<ProtocolTopic>, author: string | undefined) => Promise<CheckResult>

// A peer that missed an announcement (it was down, or joined later) asks its
// neighbours for the task's record. Answers are re-validated like gossip; a
// task announcement only as its submitter signed it (its program and dataset
// CIDs are on no chain: a neighbour's unsigned word for them, the first to
// pass the checks, stood for good).
export const TASKBOOK_PROTOCOL = '/proofswarm/taskbook/1.0.0'
const MAX_RECORD_BYTES = 256 * 1024

export class TaskBook {
  private readonly db: Level<string, Uint8Array>
  private readonly waiters = new Set<Waiter>()
  private chain: Promise<unknown> = Promise.resolve()
  private checker?: AnnouncementCheck

  constructor (private readonly peer: Peer) {
    this.db = sublevel(peer.db, 'taskbook')
    void peer.host.handle(TASKBOOK_PROTOCOL, stream => {
      void (async () => {
        const lp = lpStream(stream, { maxDataLength: 64 })
        const req = JSON.parse(new TextDecoder().decode((await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray())) as { taskId?: unknown }
        const id = Number(req.taskId)
        const rec = Number.isSafeInteger(id) && id >= 0 ? await this.get(id) : undefined
        const out = new TextEncoder().encode(JSON.stringify(rec != null ? { taskSigned: rec.taskSigned ?? null, proof: rec.proof ?? null } : {}))
        // a reader that takes no answer, or never closes its end, does not keep the stream
        await lp.write(out.length <= MAX_RECORD_BYTES ? out : new TextEncoder().encode('{}'), { signal: AbortSignal.timeout(10_000) })
        noteProgress(stream, out.byteLength)
        await closeStream(stream)
      })().catch((err: unknown) => { stream.abort(err instanceof Error ? err : new Error(String(err))) })
    }, { maxInboundStreams: 8, maxOutboundStreams: 8 }).catch(err => peer.log.warn({ err }, 'cannot serve the task book'))
    for (const topic of PROTOCOL_TOPICS) {
      peer.gossip.register(topic, {
        decode: data => decodeMessage(topic, data),
        check: async (msg, author) => await this.check(topic, msg as never, author),
        handle: async (msg, _from, raw) => { await this.record(topic, msg as never, topic === 'tasks' ? envelopeOf(raw) : undefined) }
      })
    }
  }

  /** From now on, announcements are checked against the chain before they are stored or forwarded. */
  setChecker (c: AnnouncementCheck): void { this.checker = c }

  private async check (topic: ProtocolTopic, msg: MessageOf<ProtocolTopic>, author: string | undefined): Promise<CheckResult> {
    if (this.checker != null) return await this.checker(topic, msg, author)
    // without a chain (a bootstrap peer, or before the chain is reached) no announcement
    // can be checked: neither kept nor relayed, so no lie travels through us (and we are
    // never penalised for one); peers that can check relay them. One signed by someone
    // other than the peer it names is a lie on its face.
    if (topic === 'verdicts' && author !== undefined && author !== (msg as MessageOf<'verdicts'>).verifier) return 'reject'
    if (topic === 'disputes') {
      const d = msg as MessageOf<'disputes'>
      if (author !== undefined && author !== d.challenger && author !== d.defender) return 'reject'
    }
    return 'ignore'
  }

  private key (taskId: number): string { return String(taskId).padStart(12, '0') }

  async get (taskId: number): Promise<TaskRecord | undefined> {
    return await getJson<TaskRecord>(this.db, this.key(taskId))
  }

  async all (): Promise<TaskRecord[]> {
    const out: TaskRecord[] = []
    for await (const v of this.db.values()) out.push(JSON.parse(new TextDecoder().decode(v)) as TaskRecord)
    return out
  }

  /** Records a message (ours or received; `signed`: a task announcement's envelope); serialised so concurrent updates merge. */
  async record<T extends ProtocolTopic> (topic: T, msg: MessageOf<T>, signed?: SignedEnvelope): Promise<void> {
    const taskId = (msg as { taskId: number }).taskId
    this.chain = this.chain.then(async () => {
      const r = await this.get(taskId) ?? { taskId, verdicts: [], disputes: [], updatedAt: 0 }
      // the first announcement that passed the checks stands: a later one never replaces it
      if (topic === 'tasks') {
        if (r.task == null) { r.task = msg as MessageOf<'tasks'>; r.taskSigned = signed }
      } else if (topic === 'proofs') r.proof ??= msg as MessageOf<'proofs'>
      else if (topic === 'verdicts') {
        const v = msg as MessageOf<'verdicts'>
        r.verdicts = [...r.verdicts.filter(x => x.verifier !== v.verifier), v]
      } else {
        const d = msg as MessageOf<'disputes'>
        r.disputes = [...r.disputes.filter(x => !(x.disputeId === d.disputeId && x.phase === d.phase)), d].slice(-64)
      }
      r.updatedAt = Date.now()
      await putJson(this.db, this.key(taskId), r)
      for (const w of [...this.waiters]) {
        if (w.taskId === taskId && w.pred(r)) { this.waiters.delete(w); w.resolve(r) }
      }
    }).catch(err => this.peer.log.error({ err }, 'task book update failed'))
    await this.chain
  }

  /** Records a chain event about a task (JSON-able fields). */
  async noteChain (taskId: number, key: string, value: unknown): Promise<void> {
    this.chain = this.chain.then(async () => {
      const r = await this.get(taskId) ?? { taskId, verdicts: [], disputes: [], updatedAt: 0 }
      r.chain = { ...(r.chain ?? {}), [key]: value }
      r.updatedAt = Date.now()
      await putJson(this.db, this.key(taskId), r)
    }).catch(err => this.peer.log.error({ err }, 'task book update failed'))
    await this.chain
  }

  /** Publishes a protocol message and records it locally (gossip does not deliver to self). */
  async publish<T extends ProtocolTopic> (topic: T, msg: Omit<MessageOf<T>, 'v' | 'type'>): Promise<void> {
    const bytes = encodeTopicMessage(topic, msg)
    // our own task announcement, signed as gossip signs it: what we hand a neighbour that missed it
    const signed = topic === 'tasks' ? await signEnvelope(this.peer.identity.privateKey, topicName(this.peer.network, topic), bytes) : undefined
    await this.record(topic, decodeMessage(topic, bytes), signed)
    await this.peer.gossip.publish(topic, bytes)
  }

  /** Asks up to 8 connected peers for a task's announcements; valid answers are recorded. */
  async pull (taskId: number): Promise<void> {
    const peers = this.peer.host.getPeers().slice(0, 8)
    await Promise.allSettled(peers.map(async pid => {
      const stream = await this.peer.host.dialProtocol(pid, TASKBOOK_PROTOCOL, { signal: AbortSignal.timeout(5000) })
      try {
        const lp = lpStream(stream, { maxDataLength: MAX_RECORD_BYTES })
        await lp.write(new TextEncoder().encode(JSON.stringify({ taskId })))
        const res = JSON.parse(
          new TextDecoder().decode((await lp.read({ signal: AbortSignal.timeout(5000) })).subarray())
        ) as { taskSigned?: unknown, proof?: unknown }
        void closeStream(stream)
        // the same checks as gossip, with its author: the submitter's peer, whose signature it carries
        if (res.taskSigned != null) {
          const { author, data } = await openEnvelope(res.taskSigned, topicName(this.peer.network, 'tasks'))
          const t = decodeMessage('tasks', data)
          const e = res.taskSigned as SignedEnvelope
          if (t.taskId === taskId && await this.check('tasks', t, author) === 'accept') await this.record('tasks', t, { from: e.from, seqno: e.seqno, data: e.data, signature: e.signature })
        }
        if (res.proof != null) {
          const p = decodeMessage('proofs', encodeTopicMessage('proofs', strip(res.proof)))
          if (p.taskId === taskId && await this.check('proofs', p, undefined) === 'accept') await this.record('proofs', p)
        }
      } catch (err) {
        stream.abort(err instanceof Error ? err : new Error(String(err)))
        throw err
      }
    }))
  }

  /** Resolves when the record satisfies `pred`, or rejects after `timeoutMs`. */
  async waitFor (taskId: number, pred: (r: TaskRecord) => boolean, timeoutMs: number, what: string): Promise<TaskRecord> {
    const now = await this.get(taskId)
    if (now != null && pred(now)) return now
    // not heard over gossip (yet): ask the neighbours once
    await this.pull(taskId).catch(() => {})
    const pulled = await this.get(taskId)
    if (pulled != null && pred(pulled)) return pulled
    return await new Promise<TaskRecord>((resolve, reject) => {
      const w: Waiter = { taskId, pred, resolve: r => { clearTimeout(t); resolve(r) } }
      const t = setTimeout(() => { this.waiters.delete(w); reject(new Error(`no ${what} for task ${taskId} heard over gossip within ${timeoutMs} ms`)) }, timeoutMs)
      this.waiters.add(w)
    })
  }
}

function strip (m: unknown): never {
  const { v: _v, type: _t, ...rest } = m as Record<string, unknown>
  for (const k of Object.keys(rest)) if (rest[k] == null) delete rest[k]
  return rest as never
}
