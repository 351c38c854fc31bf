import type { Logger } from '../log.js'
import type { Host } from './host.js'

// gossipsub graylists a peer whose score fell below graylistThreshold (it
// ignores its RPCs) but keeps the connection: a peer that sent forged or
// invalid messages stayed connected, using a slot and the other protocols.
// Graylisted peers are hung up on; the score outlives the connection
// (retainScore), and the connection gater (host.ts) refuses the peer while
// it stays under the threshold.

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
  const timer = setInterval(() => {
    for (const p of host.getPeers()) {
      const id = p.toString()
      const score = pubsub.getScore(id)
      if (score >= threshold) continue
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
