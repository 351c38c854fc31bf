// Which providers a fetcher stops asking, and for what. A bad block (bytes
// not matching its CID) bans its sender for that block only: a provider
// whose disk flipped a bit in one block still serves the others. Bad blocks
// cost the fetcher a download and a hash each, so a provider that sent
// MAX_BAD_BLOCKS of them within the ban time is banned for everything.

export const MAX_BAD_BLOCKS = 3
/** (provider, block) bans kept at most; past it the oldest go first */
const MAX_BLOCK_BANS = 16_384

export class ProviderBans {
  private readonly peers = new Map<string, number>()
  /** `${peer} ${cid}` → until (ms) */
  private readonly blocks = new Map<string, number>()
  /** peer → times (ms) of its bad blocks within the ban time */
  private readonly strikes = new Map<string, number[]>()

  constructor (readonly banMs: number, private readonly now: () => number = Date.now) {}

  /** Records a bad block from `peer`; 'peer' when that makes it banned for everything. */
  badBlock (peer: string, cid: string): 'block' | 'peer' {
    const t = this.now()
    if (this.blocks.size >= MAX_BLOCK_BANS) this.prune(t)
    this.blocks.delete(`${peer} ${cid}`) // re-inserted last: the oldest bans are first in the map
    this.blocks.set(`${peer} ${cid}`, t + this.banMs)
    const recent = (this.strikes.get(peer) ?? []).filter(at => at > t - this.banMs)
    recent.push(t)
    this.strikes.set(peer, recent)
    if (recent.length < MAX_BAD_BLOCKS) return 'block'
    this.peers.set(peer, t + this.banMs)
    return 'peer'
  }

  isBanned (peer: string): boolean {
    const until = this.peers.get(peer)
    if (until == null) return false
    if (this.now() < until) return true
    this.peers.delete(peer)
    this.strikes.delete(peer)
    return false
  }

  blockBanned (peer: string, cid: string): boolean {
    if (this.blocks.size === 0) return false
    const until = this.blocks.get(`${peer} ${cid}`)
    if (until == null) return false
    if (this.now() < until) return true
    this.blocks.delete(`${peer} ${cid}`)
    return false
  }

  private prune (t: number): void {
    for (const [k, until] of this.blocks) if (until <= t) this.blocks.delete(k)
    for (const k of this.blocks.keys()) {
      if (this.blocks.size < MAX_BLOCK_BANS * 0.9) break
      this.blocks.delete(k)
    }
    for (const [p, times] of this.strikes) if (times.every(at => at <= t - this.banMs)) this.strikes.delete(p)
  }
}
