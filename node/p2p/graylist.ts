import type { Logger } from '../log.js'
import type { Host } from './host.js'

// gossipsub graylists a peer whose score fell below graylistThreshold (it
// ignores its RPCs) but keeps the connection: a peer that sent forged or
// invalid messages stayed connected, using a slot and the other protocols.
// Graylisted peers are hung up on; the score outlives the connection
// (retainScore), so one that dials back is graylisted again at once.

export const GRAYLIST_CHECK_MS = 1000

export function disconnectGraylisted (host: Host, log: Logger, everyMs = GRAYLIST_CHECK_MS): () => void {
  const pubsub = host.services.pubsub as unknown as { getScore: (id: string) => number, opts: { scoreThresholds: { graylistThreshold: number } } }
  const threshold = pubsub.opts.scoreThresholds.graylistThreshold
  let hungUp = 0
  const timer = setInterval(() => {
    for (const p of host.getPeers()) {
      const score = pubsub.getScore(p.toString())
      if (score >= threshold) continue
      hungUp++
      log.warn({ peer: p.toString(), score: Math.round(score * 100) / 100, threshold }, 'disconnecting a graylisted gossip peer (invalid or forged messages)')
      void host.hangUp(p).catch(() => {})
    }
  }, everyMs)
  timer.unref()
  return () => { clearInterval(timer); void hungUp }
}
