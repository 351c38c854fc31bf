import type { CID } from 'multiformats/cid'

// Which block of one fetch is asked of which provider. A block goes out once
// from the queue; in the end game (queue empty) an idle provider re-requests
// one still in flight at another (at most one duplicate each), so a provider
// that stalls without closing delays the fetch by its share, not by the
// request timeout. A provider is not asked again for a block it lacked in
// this fetch, nor for one it sent a bad copy of (or is banned for).

export class BlockQueue {
  /** indices not yet requested (or given back), in request order */
  readonly queue: number[]
  /** 1 once the block is verified (a second copy of an end-game duplicate is dropped) */
  readonly done: Uint8Array
  /** how many providers have the block in flight */
  readonly flying: Uint8Array
  /** blocks a provider must not be asked for: it lacked them, or sent a bad copy (then banned) */
  readonly lacking = new Map<number, Set<string>>()
  readonly notFound = new Map<number, Set<string>>()
  readonly badCopy = new Map<number, Set<string>>()
  private readonly keys: Array<string | undefined>

  constructor (readonly cids: CID[], private readonly blockBanned?: (peerId: string, cid: string) => boolean) {
    this.queue = cids.map((_, i) => i)
    this.done = new Uint8Array(cids.length)
    this.flying = new Uint8Array(cids.length)
    this.keys = new Array(cids.length)
  }

  keyOf (i: number): string { return (this.keys[i] ??= this.cids[i].toString()) }

  private skip (peer: string, i: number): boolean {
    return this.lacking.get(i)?.has(peer) === true || this.blockBanned?.(peer, this.keyOf(i)) === true
  }

  /** an end-game duplicate for `peer`: a block in flight at exactly one other provider */
  nextDuplicate (own: Array<{ index: number }>, peer: string): number | undefined {
    for (let i = 0; i < this.cids.length; i++) {
      if (this.done[i] === 0 && this.flying[i] === 1 && !own.some(x => x.index === i) && !this.skip(peer, i)) return i
    }
    return undefined
  }

  /** the next queued block `peer` may be asked for, taken off the queue */
  takeFor (peer: string): number | undefined {
    const queue = this.queue
    for (let k = 0; k < queue.length; k++) {
      const i = queue[k]
      if (this.done[i] === 1) { queue.splice(k--, 1); continue }
      if (!this.skip(peer, i)) { queue.splice(k, 1); return i }
    }
    return undefined
  }

  hasWorkFor (peer: string): boolean {
    return this.queue.some(i => this.done[i] === 0 && !this.skip(peer, i)) || this.nextDuplicate([], peer) != null
  }

  /** `peer` cannot give block `index` (`why`: notFound or badCopy): not asked of it again, back to the queue for the others */
  giveBack (index: number, peer: string, why: Map<number, Set<string>>): void {
    this.flying[index]--
    for (const m of [this.lacking, why]) {
      let set = m.get(index)
      if (set == null) { set = new Set(); m.set(index, set) }
      set.add(peer)
    }
    if (this.done[index] === 0 && this.flying[index] === 0) this.queue.unshift(index)
  }

  /** blocks a provider did not deliver go back to the front of the queue (unless another provider still has them in flight, or they arrived) */
  requeue (inflight: Array<{ index: number }>): void {
    for (let i = inflight.length - 1; i >= 0; i--) {
      const index = inflight[i].index
      this.flying[index]--
      if (this.done[index] === 0 && this.flying[index] === 0) this.queue.unshift(index)
    }
    inflight.length = 0
  }

  /** up to three missing blocks providers lacked or sent bad copies of, for the no-provider error */
  missingDetail (): string {
    let detail = ''
    const lacked = [...this.notFound].filter(([i]) => this.done[i] === 0).slice(0, 3)
    if (lacked.length > 0) detail += `; ${lacked.map(([i, peers]) => `${[...peers].map(id => id.slice(-8)).join(', ')} does not have block ${this.keyOf(i)}`).join('; ')}`
    const bad = [...this.badCopy].filter(([i]) => this.done[i] === 0).slice(0, 3)
    if (bad.length > 0) detail += `; ${bad.map(([i, peers]) => `${[...peers].map(id => id.slice(-8)).join(', ')} sent a bad copy of block ${this.keyOf(i)}`).join('; ')}`
    return detail
  }
}
