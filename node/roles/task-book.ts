import type { Level } from 'level'
import { decodeMessage, encodeTopicMessage, PROTOCOL_TOPICS, type MessageOf, type ProtocolTopic } from '../../protocols/messages/index.js'
import type { Peer } from '../peer.js'
import { getJson, putJson, sublevel } from '../storage/db.js'

// What this peer has heard about each task over gossip (program and proof
// CIDs, verdicts, disputes), persisted so a restart does not forget. Gossip
// is only a hint: everything taken from here is checked against the chain
// (hashes, roots) before it is used.

export interface TaskRecord {
  taskId: number
  task?: MessageOf<'tasks'>
  proof?: MessageOf<'proofs'>
  verdicts: Array<MessageOf<'verdicts'>>
  disputes: Array<MessageOf<'disputes'>>
  /** what this peer saw on chain about the task (settlement, dispute outcomes), by event name */
  chain?: Record<string, unknown>
  updatedAt: number
}

type Waiter = { taskId: number, pred: (r: TaskRecord) => boolean, resolve: (r: TaskRecord) => void }

export class TaskBook {
  private readonly db: Level<string, Uint8Array>
  private readonly waiters = new Set<Waiter>()
  private chain: Promise<unknown> = Promise.resolve()

  constructor (private readonly peer: Peer) {
    this.db = sublevel(peer.db, 'taskbook')
    for (const topic of PROTOCOL_TOPICS) {
      peer.gossip.register(topic, {
        decode: (data) => decodeMessage(topic, data),
        handle: async (msg) => { await this.record(topic, msg as never) }
      })
    }
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

  /** Records a message (ours or received); serialised so concurrent updates merge. */
  async record<T extends ProtocolTopic> (topic: T, msg: MessageOf<T>): Promise<void> {
    const taskId = (msg as { taskId: number }).taskId
    this.chain = this.chain.then(async () => {
      const r = await this.get(taskId) ?? { taskId, verdicts: [], disputes: [], updatedAt: 0 }
      if (topic === 'tasks') r.task = msg as MessageOf<'tasks'>
      else if (topic === 'proofs') r.proof = msg as MessageOf<'proofs'>
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
    await this.record(topic, decodeMessage(topic, bytes))
    await this.peer.gossip.publish(topic, bytes)
  }

  /** Resolves when the record satisfies `pred`, or rejects after `timeoutMs`. */
  async waitFor (taskId: number, pred: (r: TaskRecord) => boolean, timeoutMs: number, what: string): Promise<TaskRecord> {
    const now = await this.get(taskId)
    if (now != null && pred(now)) return now
    return await new Promise<TaskRecord>((resolve, reject) => {
      const w: Waiter = { taskId, pred, resolve: (r) => { clearTimeout(t); resolve(r) } }
      const t = setTimeout(() => { this.waiters.delete(w); reject(new Error(`no ${what} for task ${taskId} heard over gossip within ${timeoutMs} ms`)) }, timeoutMs)
      this.waiters.add(w)
    })
  }
}
