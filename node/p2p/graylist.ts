import type { Logger } from '../log.js'
import { connectedPeers, type Host } from './host.js'

// gossipsub graylists a peer whose score fell below graylistThreshold (it
// ignores its RPCs) but keeps the connection: a peer that sent forged or
// invalid messages stayed connected, using a slot and the other protocols.
// Graylisted peers are hung up on, once per fall under the threshold: one
// that dials back (to fetch a shard, to answer a dispute — its verdicts on
// chain still count) is let in, and gossipsub keeps ignoring its RPCs while
// its score, which outlives the connection, stays low.

export const GRAYLIST_CHECK_MS = 1000
const REMEMBERED = 256

export interface GraylistGuard {
  stop: () => void
  /** peers hung up on (the latest REMEMBERED), with their score then */
  disconnected: () => Record<string, { score: number, at: number }>
}

export function disconnectGraylisted (host: Host, log: Logger, everyMs = GRAYLIST_CHECK_MS): GraylistGuard {
  const pubsub = host.services.pubsub as unknown as { getScore: (id: string) => number, opts: { scoreThresholds: { graylistThreshold: number } } }
  const threshold = pubsub.opts.scoreThresholds.graylistThreshold
  const hungUp = new Map<string, { score: number, at: number }>()
  /** peers hung up on and still under the threshold: not hung up on again */
  const episode = new Set<string>()
  const timer = setInterval(() => {
    for (const id of [...episode]) if (pubsub.getScore(id) >= threshold) episode.delete(id)
    for (const [id, p] of connectedPeers(host)) {
      const score = pubsub.getScore(id)
      if (score >= threshold || episode.has(id)) continue
      episode.add(id)
      if (episode.size > REMEMBERED) episode.delete(episode.values().next().value as string)
      hungUp.delete(id)
      hungUp.set(id, { score: Math.round(score * 100) / 100, at: Date.now() })
      if (hungUp.size > REMEMBERED) hungUp.delete(hungUp.keys().next().value as string)
      log.warn({ peer: id, score: Math.round(score * 100) / 100, threshold }, 'disconnecting a graylisted gossip peer (invalid or forged messages)')
      void host.hangUp(p).catch(() => {})
    }
  }, everyMs)
  timer.unref()
  return { stop: () => clearInterval(timer), disconnected: () => Object.fromEntries(hungUp) }
}
