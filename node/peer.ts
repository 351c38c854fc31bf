import { multiaddr } from '@multiformats/multiaddr'
import type { Level } from 'level'
import { DEFAULT_NETWORK, parseRoles, type Role } from './config.js'
import { ControlServer } from './control/server.js'
import { gossipMetricsRegister, type GossipMetricsRegister } from './p2p/gossip-metrics.js'
import { disconnectGraylisted, type GraylistGuard } from './p2p/graylist.js'
import { newToken, removeControlFiles, writeControlFiles } from './control/files.js'
import { loadOrCreateIdentity, type Identity } from './identity.js'
import { createLogger, type Logger } from './log.js'
import { createNodeMetrics, type NodeMetrics } from './metrics.js'
import { dialBootstrap, parseBootstrapAddrs } from './p2p/bootstrap-dial.js'
import { GossipRouter } from './p2p/gossip.js'
import { FloodPenalties, OPEN_TOPIC_RATE } from './p2p/gossip-rate.js'
import { connectedPeers, createHost, dialTimeoutMs, type Host } from './p2p/host.js'
import { startPeerKeeper } from './p2p/peer-keeper.js'
import { startConnectionTrimmer, TRIM_GRACE_MS, TRIM_INTERVAL_MS, TRIM_TARGET, type ConnectionTrimmer } from './p2p/conn-trim.js'
import { decidePrivateAddrs, listenHosts, type PrivateAddrsDecision } from './p2p/private-addrs.js'
import { topicName } from './p2p/topics.js'
import { PROTOCOL_TOPICS } from '../protocols/messages/schemas.js'
import { getJson, openPeerDb, putJson, sublevel, type PeerDb } from './storage/db.js'
import { installPeerRoutes } from './peer-routes.js'
import { processMemory, type ProcessMemory } from './process-memory.js'
import { strayRejections, type StrayRejections } from './process-policy.js'

export interface PeerOptions {
  dataDir: string
  network?: string
  listen: string[]
  bootstrap: string[]
  /** roles to store; undefined keeps the stored ones */
  roles?: Role[]
  controlPort?: number
  logLevel?: string
  logger?: Logger
  /** keep loopback/private addresses in DHT records (LANs, one machine); default: only when every address of this peer is private (node/p2p/private-addrs.ts) */
  privateNetwork?: boolean
  bootstrapAttempts?: number
  bootstrapBaseDelayMs?: number
  kind: 'bootstrap' | 'peer'
  /** attached after the host is up (shard exchange, role actors, ...); see node/services.ts */
  services?: Array<(peer: Peer) => Promise<void>>
}

export interface PeerStatus {
  peerId: string
  kind: 'bootstrap' | 'peer'
  network: string
  listenAddrs: string[]
  connectedPeers: Array<{ peerId: string, addrs: string[] }>
  dhtRoutingTableSize: number
  /** connections closed by the trimmer since start (node/p2p/conn-trim.ts) */
  connectionsTrimmed: number
  topics: Array<{ topic: string, meshPeers: number, subscribers: number }>
  roles: Role[]
  uptimeSeconds: number
  /** whether loopback/private addresses are kept in DHT records, and why */
  privateAddrs: { kept: boolean, reason: string, warning?: string }
  gossip: {
    accepted: number
    ignored: number
    rejected: number
    rejectedBy: Record<string, number>
    /** refused for their author's or their topic's rate (node/p2p/gossip-rate.ts) */
    overRate: number
    invalid: Record<string,
      number>
    scores: Record<string, number>
    disconnected: Record<string, { score: number, at: number }>
  }
  /** ms from process start: ready, first connection, first time each topic's mesh reached D_lo peers */
  milestones: { readyMs?: number, firstConnectionMs?: number, meshMs: Record<string, number> }
  /** the process's memory (shared by its peers when it runs several) */
  memory: ProcessMemory
  /** promise rejections nothing handled in this process: logged, not fatal (node/process-policy.ts) */
  unhandledRejections: StrayRejections
}

const MESH_D_LO = 4
/** gossipsub's count of messages it refused itself, by reason (invalid_signature: forged) */
const INVALID_SERIES = 'gossipsub_msg_received_invalid_total'

const ROLES_KEY = 'roles'

/** One proofswarm peer: LevelDB, identity, libp2p host, gossip router, control API, metrics. */
export class Peer {
  readonly startedAt = Date.now()
  private stopping?: Promise<void>
  private readonly onStopHooks: Array<() => Promise<void> | void> = []
  private uptimeTimer?: NodeJS.Timeout
  private gossipMetrics?: GossipMetricsRegister
  private graylist?: GraylistGuard
  private trimmer?: ConnectionTrimmer
  private readonly milestones: PeerStatus['milestones'] = { meshMs: {} }

  private constructor (
    readonly opts: PeerOptions,
    readonly log: Logger,
    readonly db: PeerDb,
    readonly meta: Level<string, Uint8Array>,
    readonly identity: Identity,
    readonly host: Host,
    readonly gossip: GossipRouter,
    readonly control: ControlServer,
    readonly metrics: NodeMetrics,
    public roles: Role[],
    readonly privateAddrs: PrivateAddrsDecision
  ) {}

  get network (): string { return this.opts.network ?? DEFAULT_NETWORK }
  get peerId (): string { return this.identity.peerId.toString() }

  static async start (opts: PeerOptions): Promise<Peer> {
    const network = opts.network ?? DEFAULT_NETWORK
    const log = opts.logger ?? createLogger(opts.kind, { level: opts.logLevel })
    for (const l of opts.listen) {
      try { multiaddr(l) } catch (err) { throw new Error(`invalid listen multiaddr "${l}": ${(err as Error).message}`) }
    }
    const bootstrapAddrs = parseBootstrapAddrs(opts.bootstrap)

    const db = await openPeerDb(opts.dataDir, msg => log.warn(msg))
    const cleanup: Array<() => Promise<unknown>> = [async () => await db.close()]
    try {
      const meta = sublevel(db, 'meta')
      const identity = await loadOrCreateIdentity(meta)
      log.info({ peerId: identity.peerId.toString(), created: identity.created }, identity.created ? 'created a new peer identity' : 'loaded peer identity')
      let roles = opts.roles
      if (roles != null) await putJson(meta, ROLES_KEY, roles)
      else roles = parseRoles(await getJson<string[]>(meta, ROLES_KEY) ?? [])

      const metrics = createNodeMetrics()
      const privateAddrs = decidePrivateAddrs(opts.privateNetwork, listenHosts(opts.listen))
      log.info({ keep: privateAddrs.keep }, privateAddrs.reason)
      if (privateAddrs.warning != null) log.warn(privateAddrs.warning)
      const gossipMetrics = gossipMetricsRegister(metrics.registry, [INVALID_SERIES])
      // what flooding gossip costs a peer, in gossipsub's own score (node/p2p/gossip-rate.ts)
      const penalties = new FloodPenalties()
      const host = await createHost({
        appScore: id => -penalties.of(id),
        gossipMetrics,
        privateKey: identity.privateKey,
        listen: opts.listen,
        bootstrap: [],
        bootstrapPeerIds: bootstrapAddrs.map(a => a.getComponents().find(c => c.name === 'p2p')?.value).filter((v): v is string => v != null),
        privateNetwork: privateAddrs.keep,
        scoredTopics: ['announce', ...PROTOCOL_TOPICS].map(t => topicName(network, t)),
        metricsRegistry: metrics.registry
      }).catch((err: NodeJS.ErrnoException) => { throw explainListenError(err, opts.listen) })
      cleanup.unshift(async () => { await host.stop() })

      const gossip = new GossipRouter(host.services.pubsub, network, log,
        (topic, result) => metrics.gossipMessages.inc({ topic, result }), penalties)
      // a free-form topic for operators and tests (anyone may author its messages: a rate for
      // the topic besides its authors'); protocol topics come with the role actors
      gossip.register('announce', { decode: decodeJsonObject }, OPEN_TOPIC_RATE)

      const token = newToken()
      const control = new ControlServer(token)
      const peer = new Peer(opts, log, db, meta, identity, host, gossip, control, metrics, roles, privateAddrs)
      peer.gossipMetrics = gossipMetrics
      installPeerRoutes(peer)
      const port = await control.listen(opts.controlPort ?? 0)
      cleanup.unshift(async () => await control.close())
      await writeControlFiles(opts.dataDir, { port, pid: process.pid, peerId: peer.peerId, startedAt: new Date(peer.startedAt).toISOString() }, token)
      log.info({ port }, 'control API listening on 127.0.0.1')

      const sinceStart = (): number => Math.round(performance.now())
      host.addEventListener('connection:open', () => {
        metrics.connectedPeers.set(connectedPeers(host).size)
        peer.milestones.firstConnectionMs ??= sinceStart()
      })
      host.services.pubsub.addEventListener('gossipsub:graft', evt => {
        const topic = evt.detail.topic
        if (peer.milestones.meshMs[topic] != null) return
        const mesh = (host.services.pubsub as unknown as { getMeshPeers: (t: string) => string[] }).getMeshPeers(topic).length
        if (mesh >= MESH_D_LO) peer.milestones.meshMs[topic] = sinceStart()
      })
      const stopKeeper = startPeerKeeper(host, log, { target: 12, intervalMs: 1000, dialsPerRound: 8, dialTimeoutMs: dialTimeoutMs(privateAddrs.keep) })
      peer.onStop(stopKeeper)
      peer.trimmer = startConnectionTrimmer(host, log, { target: TRIM_TARGET, graceMs: TRIM_GRACE_MS, intervalMs: TRIM_INTERVAL_MS })
      peer.onStop(() => peer.trimmer?.stop())
      peer.graylist = disconnectGraylisted(host, log)
      peer.onStop(() => peer.graylist?.stop())
      host.addEventListener('connection:close', () => metrics.connectedPeers.set(connectedPeers(host).size))
      peer.uptimeTimer = setInterval(() => metrics.uptimeSeconds.set((Date.now() - peer.startedAt) / 1000), 5000)
      peer.uptimeTimer.unref()

      cleanup.unshift(async () => await peer.stop())
      for (const attach of opts.services ?? []) await attach(peer)

      if (bootstrapAddrs.length > 0) {
        const n = await dialBootstrap(host, bootstrapAddrs, log, {
          attempts: opts.bootstrapAttempts ?? 5,
          baseDelayMs: opts.bootstrapBaseDelayMs ?? 500,
          timeoutMs: dialTimeoutMs(privateAddrs.keep)
        })
        log.info(`connected to ${n} of ${bootstrapAddrs.length} bootstrap peer(s)`)
        // The routing table fills from the peer keeper's lookup of our own id
        // (run as soon as the bootstrap peer is identified) and from the
        // peers we connect to; the DHT refreshes its far buckets every 5 min.
        // A forced refresh here (one lookup per bucket, each dialling the
        // peers it asks) made joining the most dial-heavy moment of a peer.
      }
      peer.milestones.readyMs = Math.round(performance.now())
      return peer
    } catch (err) {
      for (const c of cleanup) await c().catch(() => {})
      await removeControlFiles(opts.dataDir).catch(() => {})
      throw err
    }
  }

  onStop (hook: () => Promise<void> | void): void { this.onStopHooks.push(hook) }

  async setRoles (roles: Role[]): Promise<void> {
    this.roles = roles
    await putJson(this.meta, ROLES_KEY, roles)
  }

  status (): PeerStatus {
    const pubsub = this.host.services.pubsub as unknown as {
      getMeshPeers: (t: string) => string[]
      getSubscribers: (t: string) => unknown[]
      getTopics: () => string[]
    }
    return {
      peerId: this.peerId,
      kind: this.opts.kind,
      network: this.network,
      listenAddrs: this.host.getMultiaddrs().map(a => a.toString()),
      connectedPeers: this.host.getPeers().map(p => ({
        peerId: p.toString(),
        addrs: this.host.getConnections(p).map(c => c.remoteAddr.toString())
      })),
      connectionsTrimmed: this.trimmer?.trimmed() ?? 0,
      dhtRoutingTableSize: (this.host.services.dht as unknown as { routingTable?: { size: number } }).routingTable?.size ?? 0,
      topics: pubsub.getTopics().map(t => ({ topic: t, meshPeers: pubsub.getMeshPeers(t).length, subscribers: pubsub.getSubscribers(t).length })),
      roles: this.roles,
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 100) / 10,
      privateAddrs: {
        kept: this.privateAddrs.keep, reason: this.privateAddrs.reason, ...(this.privateAddrs.warning != null ? { warning: this.privateAddrs.warning } : {})
      },
      gossip: {
        accepted: this.gossip.stats.accepted,
        ignored: this.gossip.stats.ignored,
        rejected: this.gossip.stats.rejected,
        rejectedBy: { ...this.gossip.stats.rejectedBy },
        overRate: this.gossip.stats.overRate,
        // refused by gossipsub before our validators: bad signatures (forged), bad seqno/from, ...
        invalid: Object.fromEntries(Object.entries(this.gossipMetrics?.mirrored(INVALID_SERIES) ?? {}).map(([k, v]) => [k.replace(/^error=/, ''), v])),
        // connected peers, and those hung up on for their score (gossipsub keeps it a while)
        scores: Object.fromEntries([...new Set([...this.host.getPeers().map(p => p.toString()), ...Object.keys(this.graylist?.disconnected() ?? {})])]
          .map(id => [id, Math.round((this.host.services.pubsub as unknown as { getScore: (id: string) => number }).getScore(id) * 100) / 100])),
        disconnected: this.graylist?.disconnected() ?? {}
      },
      milestones: this.milestones,
      memory: processMemory(),
      unhandledRejections: strayRejections()
    }
  }

  async stop (): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.uptimeTimer)
      for (const h of this.onStopHooks.reverse()) await Promise.resolve().then(h).catch((err: unknown) => this.log.error({ err }, 'stop hook failed'))
      await this.control.close().catch(() => {})
      await removeControlFiles(this.opts.dataDir).catch(() => {})
      await Promise.resolve().then(async () => await this.host.stop()).catch((err: unknown) => this.log.error({ err }, 'libp2p stop failed'))
      await this.db.close().catch(err => this.log.error({ err }, 'database close failed'))
      this.log.info('peer stopped')
    })()
    await this.stopping
  }
}

function decodeJsonObject (data: Uint8Array): unknown {
  const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data)) as unknown
  if (v == null || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object')
  return v
}

function explainListenError (err: NodeJS.ErrnoException, listen: string[]): Error {
  const msg = err?.message ?? String(err)
  if (err?.code === 'EADDRINUSE' || /EADDRINUSE|address already in use/i.test(msg)) {
    const ports = listen.map(l => /\/tcp\/(\d+)/.exec(l)?.[1]).filter(Boolean).join(', ')
    return new Error(`cannot listen on ${listen.join(', ')}: port ${ports} is already in use; stop the other process or choose another --listen port (tcp/0 picks a free one)`)
  }
  return new Error(`cannot start libp2p on ${listen.join(', ')}: ${msg}`)
}
