import type { RoleName } from '../../actors/supervisor.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import { serveRoutes } from '../control/routes.js'
import type { Peer } from '../peer.js'
import { findShardService } from '../shards/index.js'
import { connectChain, ensureRegistered } from './chain-link.js'
import type { NodePorts, EconomicsConfig } from './node-ports.js'
import { unavailablePorts } from './ports.js'
import { getRolesService, rolesService } from './service.js'
import { TaskBook } from './task-book.js'
import type { DisputeService } from '../dispute/index.js'
import type { EngineFaults } from '../engine/protocol.js'
import type { AvailabilityResponder } from '../availability/responder.js'
import type { DatasetResponder } from '../availability/dataset-responder.js'
import type { ChunkResponder } from '../erasure/responder.js'
import type { DrawRevealer } from '../dispute/draw-revealer.js'
import { announcementCheck } from './announcement-check.js'
import { Observability } from './observability.js'
import { followChain } from './chain-follow.js'
import { rolesRoutes } from './api/routes.js'
import { statusHandlers } from './api/status.js'
import { recordHandlers } from './api/records.js'
import { tasksHandler } from './api/tasks.js'
import { submitHandler } from './api/submit.js'
import { scheduledPorts } from './scheduling.js'
import type { SchedulerOptions } from './job-scheduler.js'

// Wires a peer's role actors to the world: the task book (gossip), the chain
// (registration, events → actors) and the shard exchange. Without --chain
// the actors still run, and every chain-dependent step fails with a message
// naming the flag to set.

export interface RolesInit {
  chainUrl?: string
  account?: string
  stake?: bigint
  economics?: Partial<EconomicsConfig>
  datasetDir?: string
  // ---- disputes ----
  /** FAULT INJECTION specs (`join --fault`): tamper-op=<kernel>@<step>, tamper-weight[@step], lie-in-bisection, silent */
  faults?: string[]
  /** checkpoint intervals a whistleblower replays (default: all) */
  recheckSteps?: number
  /** ms a dispute party waits for the other's off-chain answer before forcing its move on chain (default 20 s) */
  disputeForceAfterMs?: number
  /** limits of the peer's training and replay jobs (default: one per core, half the memory) */
  jobs?: SchedulerOptions
}

export function installRoles (init: RolesInit) {
  return async (peer: Peer): Promise<void> => {
    const book = new TaskBook(peer)
    const obs = new Observability(peer.metrics.registry, { url: init.chainUrl, account: init.account }, () => peer.roles, peer.log)
    const rawShards = findShardService(peer)
    const shards = rawShards != null ? obs.recordingShards(rawShards) : undefined
    let chainPromise: Promise<ChainClient> | undefined
    // the peer's libp2p key proves to the chain that this account may bind its peer id
    const signPeer = async (payload: Uint8Array): Promise<Uint8Array> => await peer.identity.privateKey.sign(payload)
    const chain = async (): Promise<ChainClient> => {
      if (init.chainUrl == null || init.account == null) throw new Error('this peer has no chain account: start it with --account <suri|keyfile> (and --chain <ws-url> unless the dev chain runs on ws://127.0.0.1:9944)')
      chainPromise ??= (async () => {
        obs.chainConnecting()
        const c = await connectChain({ url: init.chainUrl!, account: init.account!, log: peer.log }).catch((err: Error) => { obs.chainFailed(err); throw err })
        obs.chainConnected(c)
        peer.onStop(async () => { await c.disconnect().catch(() => {}) })
        await ensureRegistered(c, peer.peerId, peer.roles as RoleName[], peer.log, signPeer, init.stake)
        // with a chain, announcements are checked against it before they are stored or forwarded
        book.setChecker(announcementCheck(c))
        return c
      })()
      chainPromise.catch(() => { chainPromise = undefined }) // retry on next use
      return await chainPromise
    }
    let nodePorts: NodePorts | undefined
    // ---- disputes: the libp2p protocol is served from the start, so a defender answers even before its actor asks
    // (loaded only with a chain: it pulls in polkadot's crypto, ~40 MB a peer without a chain does not need)
    let disputes: DisputeService | undefined
    // data-availability challenges (docs/disputes.md): the solver side answers from its run directory
    let availability: AvailabilityResponder | undefined
    // dataset challenges of this node's own tasks: the submitter side answers from its dataset directory
    let datasets: DatasetResponder | undefined
    // chunk-sample requests of erasure-coded checkpoints: answered from the run directory too
    let chunkRequests: ChunkResponder | undefined
    // the solver's forced-error draw, asked for before its verified task is paid
    let draws: DrawRevealer | undefined
    let badCheckpoints = false
    let withholdDataset = false
    let trainFaults: ((taskId: number, task: TaskInfo) => Promise<EngineFaults>) | undefined
    if (init.chainUrl != null && shards != null) {
      const d = await import('../dispute/index.js')
      const faults = d.parseNodeFaults(init.faults ?? [])
      disputes = new d.DisputeService({ peer, chain, shards, faults, datasetDir: init.datasetDir, forceAfterMs: init.disputeForceAfterMs })
      await disputes.start()
      badCheckpoints = faults.badCheckpoint === true
      withholdDataset = faults.withholdDataset === true
      const { AvailabilityResponder } = await import('../availability/responder.js')
      availability = new AvailabilityResponder({ dataDir: peer.opts.dataDir, chain, log: peer.log.child({ component: 'availability' }) })
      const { DatasetResponder } = await import('../availability/dataset-responder.js')
      datasets = new DatasetResponder({ dataDir: peer.opts.dataDir, datasetDir: init.datasetDir, chain, log: peer.log.child({ component: 'datasets' }) })
      const { ChunkResponder } = await import('../erasure/responder.js')
      chunkRequests = new ChunkResponder({ dataDir: peer.opts.dataDir, chain, log: peer.log.child({ component: 'chunks' }) })
      const { DrawRevealer } = await import('../dispute/draw-revealer.js')
      draws = new DrawRevealer({ chain, log: peer.log.child({ component: 'draw' }) })
      trainFaults = async (taskId, task) => {
        // Truebit: the solver's private VRF draw may order wrong steps (docs/disputes.md)
        const forced = (await d.forcedErrorDraw(await chain(), taskId, task))?.steps ?? []
        if (forced.length > 0) peer.log.warn({ taskId, steps: forced }, 'our forced-error draw orders wrong steps: their committed leaves are marked on purpose')
        return d.trainFaults(faults, forced)
      }
    }
    const makePorts = async (): Promise<ReturnType<typeof unavailablePorts>> => {
      if (init.chainUrl == null || shards == null) return unavailablePorts(peer)
      // loaded only for a peer with a chain (the engine, erasure coding and their wasm; ~2 MiB RSS): one without has no use for them
      const { NodePorts } = await import('./node-ports.js')
      nodePorts = new NodePorts({
        peer, chain, shards, book, economics: init.economics, datasetDir: init.datasetDir,
        disputes: disputes != null
          ? { challenge: async (t, a, s) => await disputes!.challenge(t, a, s), defend: async (t, d) => await disputes!.defend(t, d) }
          : undefined,
        trainFaults,
        badCheckpoints,
        withholdDataset,
        recheckSteps: init.recheckSteps
      })
      return obs.instrumentPorts(scheduledPorts(peer, nodePorts, { chain, book, shards }, init.jobs))
    }
    await rolesService(makePorts)(peer)
    const svc = getRolesService(peer)!
    serveRoutes(peer.control, rolesRoutes, {
      ...statusHandlers(obs, () => nodePorts),
      ...recordHandlers({ disputes, availability, chunkRequests }),
      tasks: tasksHandler({ book, obs, chainIfStarted: () => chainPromise != null ? chain() : undefined, log: peer.log }),
      submit: submitHandler(svc)
    })

    if (init.chainUrl != null && init.account != null) {
      // connect in the background: the peer is useful on the swarm before the chain answers
      void (async () => {
        try {
          const c = await chain()
          peer.log.info({ account: c.address, chain: init.chainUrl }, 'connected to the chain')
          await followChain(c, { peer, svc, book, obs, availability, datasets, chunkRequests, draws, signPeer, stake: init.stake })
        } catch (err) {
          peer.log.error(`chain unavailable: ${(err as Error).message}`)
        }
      })()
    }
  }
}
