import type { Logger } from '../log.js'
import { DialBackoff, shuffled } from './dial-backoff.js'
import { connectedPeers, type Host } from './host.js'

// libp2p 3 does not dial peers by itself once the bootstrap list is done, so
// a peer that learnt of others through the DHT or identify stays connected to
// the bootstrap peer and a handful of others, and its gossip mesh stays thin.
// The keeper dials known but unconnected peers until `target` connections
// are open (Lodestar's peer manager does the same for its mesh).
//
// It acts on events, not only on its timer: the first identified connection
// (the bootstrap peer) starts a DHT lookup of our own id at once (retried
// every 250 ms while no peer answers: the routing table fills a moment after
// identify), and peers that lookup discovers are dialled within ~20 ms. Waiting for
// the next 1 s tick cost a joining peer 0.5–1 s before its mesh could form.
// While idle it stays cheap: the peer store (every record decoded) is only
// scanned when something changed, and a lookup that finds nobody new is
// repeated less and less often (a small swarm stays below target forever).
// A peer whose dial failed is left alone for a while (DialBackoff), and the
// candidates are tried in random order: under CPU starvation noise handshakes
// time out, and redialling the same peers every round fed the overload.

export interface PeerKeeperOptions {
  target: number
  /** fallback timer; rounds also run on discovery and identify events */
  intervalMs: number
  /** at most this many dials per round */
  dialsPerRound: number
  /** DHT lookups of our own id: first gap, doubled after each that finds no new peer, up to the max */
  lookupMinIntervalMs?: number
  lookupMaxIntervalMs?: number
  /** a peer whose dial failed is not redialled for this long, doubled after each further failure up to the max */
  dialBackoffMinMs?: number
  dialBackoffMaxMs?: number
  /** a dial, and a DHT lookup of our own id, is given up after this long (default 5 s) */
  dialTimeoutMs?: number
}

export function startPeerKeeper (host: Host, log: Logger, opts: PeerKeeperOptions): () => void {
  const lookupMin = opts.lookupMinIntervalMs ?? 10_000
  const lookupMax = opts.lookupMaxIntervalMs ?? 300_000
  const dialTimeoutMs = opts.dialTimeoutMs ?? 5000
  let lookupGap = 0 // the first lookup runs as soon as a peer is connected
  let lastLookup = 0
  let lookingUp = false
  let discovered = 0 // peers discovered since the last lookup started
  let unanswered = 0 // lookups in a row that no peer answered
  let running = false
  let again = false
  // the peer store may hold peers we have not tried: set by discovery and
  // lost connections, and every 10th timer round (retries of failed dials)
  let dirty = true
  let ticks = 0
  let stopped = false
  let soon: NodeJS.Timeout | undefined
  const backoff = new DialBackoff(opts.dialBackoffMinMs ?? 10_000, opts.dialBackoffMaxMs ?? 300_000)

  const lookup = (): void => {
    lookingUp = true
    lastLookup = Date.now()
    discovered = 0
    let answered = 0
    void (async () => {
      // walks the swarm; the peers found land in the peer store (peer:discovery)
      for await (const e of host.services.dht.getClosestPeers(host.peerId.toMultihash().bytes, { signal: AbortSignal.timeout(dialTimeoutMs) })) {
        if (e.name === 'PEER_RESPONSE') answered++
      }
    })().catch(() => { /* timeout or no peers: try again later */ }).finally(() => {
      lookingUp = false
      // nobody answered: the DHT had no peer to ask yet (identify just
      // finished, the routing table fills a moment later), so retry soon
      // (a few times: a peer whose connections do not speak our DHT backs off)
      unanswered = answered === 0 ? unanswered + 1 : 0
      if (unanswered > 0 && unanswered <= 8) {
        lookupGap = 250
        schedule(250)
      } else {
        lookupGap = discovered > 0 ? lookupMin : Math.min(Math.max(lookupGap * 2, lookupMin), lookupMax)
      }
    })
  }

  const round = async (): Promise<void> => {
    if (running) { again = true; return }
    running = true
    try {
      do {
        again = false
        const connected = connectedPeers(host)
        if (connected.size >= opts.target || stopped) return
        if (connected.size > 0 && !lookingUp && Date.now() - lastLookup >= lookupGap) lookup()
        if (!dirty) return
        dirty = false
        const self = host.peerId.toString()
        const candidates = shuffled((await host.peerStore.all())
          .filter(p => p.addresses.length > 0 && !connected.has(p.id.toString()) && p.id.toString() !== self && backoff.ready(p.id.toString())))
          .slice(0, Math.min(opts.dialsPerRound, opts.target - connected.size))
        await Promise.allSettled(candidates.map(async p => {
          try {
            await host.dial(p.id, { signal: AbortSignal.timeout(dialTimeoutMs) })
            backoff.succeeded(p.id.toString())
          } catch {
            backoff.failed(p.id.toString())
          }
        }))
      } while (again && !stopped)
    } catch (err) {
      log.debug({ err }, 'peer keeper round failed')
    } finally {
      running = false
    }
  }
  // coalesce bursts (a lookup discovers many peers within milliseconds)
  function schedule (delayMs = 20): void {
    if (soon != null || stopped) return
    soon = setTimeout(() => { soon = undefined; void round() }, delayMs)
    soon.unref()
  }
  const onDiscovery = (): void => { discovered++; dirty = true; schedule() }
  const onClose = (): void => { dirty = true; schedule() }
  host.addEventListener('peer:discovery', onDiscovery)
  const onIdentify = (): void => { schedule() }
  host.addEventListener('peer:identify', onIdentify)
  host.addEventListener('peer:disconnect', onClose)
  const timer = setInterval(() => {
    if (++ticks % 10 === 0) dirty = true
    void round()
  }, opts.intervalMs)
  timer.unref()
  return () => {
    stopped = true
    clearInterval(timer)
    clearTimeout(soon)
    host.removeEventListener('peer:discovery', onDiscovery)
    host.removeEventListener('peer:identify', onIdentify)
    host.removeEventListener('peer:disconnect', onClose)
  }
}
