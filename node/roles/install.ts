import type { RoleName } from '../../actors/supervisor.js'
import type { ChainClient, TaskView } from '../chain/client.js'
import { validateProgram } from '../../protocols/program/program.js'
import { HttpError } from '../control/server.js'
import type { Peer } from '../peer.js'
import { findShardService } from '../shards/index.js'
import { connectChain, ensureRegistered, toDomainEvent } from './chain-link.js'
import { NodePorts, type EconomicsConfig } from './node-ports.js'
import { unavailablePorts } from './ports.js'
import { getRolesService, rolesService } from './service.js'
import { TaskBook } from './task-book.js'
import type { DisputeService } from '../dispute/index.js'
import type { AvailabilityResponder } from '../availability/responder.js'
import type { ChunkResponder } from '../erasure/responder.js'
import { announcementCheck } from './announcement-check.js'
import { Observability } from './observability.js'
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
  // ---- disputes (issue 7) ----
  /** FAULT INJECTION specs (`join --fault`): tamper-op=<kernel>@<step>, tamper-weight[@step], lie-in-bisection, silent */
  faults?: string[]
  /** checkpoint intervals a whistleblower replays (default: all) */
  recheckSteps?: number
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
    // ---- disputes (issue 7): the libp2p protocol is served from the start, so a defender answers even before its actor asks
    // (loaded only with a chain: it pulls in polkadot's crypto, ~40 MB a peer without a chain does not need)
    let disputes: DisputeService | undefined
    // data-availability challenges (docs/disputes.md): the solver side answers from its run directory
    let availability: AvailabilityResponder | undefined
    // chunk-sample requests of erasure-coded checkpoints: answered from the run directory too
    let chunkRequests: ChunkResponder | undefined
    let badCheckpoints = false
    let trainFaultArgs: ((taskId: number, task: TaskView) => Promise<string[]>) | undefined
    if (init.chainUrl != null && shards != null) {
      const d = await import('../dispute/index.js')
      const faults = d.parseNodeFaults(init.faults ?? [])
      disputes = new d.DisputeService({ peer, chain, shards, faults, datasetDir: init.datasetDir })
      await disputes.start()
      badCheckpoints = faults.badCheckpoint === true
      const { AvailabilityResponder } = await import('../availability/responder.js')
      availability = new AvailabilityResponder({ dataDir: peer.opts.dataDir, chain, log: peer.log.child({ component: 'availability' }) })
      const { ChunkResponder } = await import('../erasure/responder.js')
      chunkRequests = new ChunkResponder({ dataDir: peer.opts.dataDir, chain, log: peer.log.child({ component: 'chunks' }) })
      trainFaultArgs = async (taskId, task) => {
        // Truebit: the solver's private VRF draw may order one wrong step (docs/disputes.md)
        const forced = (await d.forcedErrorDraw(await chain(), taskId, task))?.step
        if (forced != null) peer.log.warn({ taskId, step: forced }, 'our forced-error draw orders a wrong step: corrupting it on purpose')
        // train-through-nan is the training child's alone (a trace child traces whatever the step holds)
        return [...d.faultArgs(faults, forced), ...(faults.nanThrough === true ? ['--fault-nan-through'] : []), ...(faults.fakeDivergence !== undefined ? ['--fault-diverge', String(faults.fakeDivergence)] : [])]
      }
    }
    const makePorts = async (): Promise<ReturnType<typeof unavailablePorts>> => {
      if (init.chainUrl == null || shards == null) return unavailablePorts(peer)
      nodePorts = new NodePorts({
        peer, chain, shards, book, economics: init.economics, datasetDir: init.datasetDir,
        disputes: disputes != null ? { challenge: async (t, a, s) => await disputes!.challenge(t, a, s), defend: async (t, d) => await disputes!.defend(t, d) } : undefined,
        trainFaultArgs,
        badCheckpoints,
        recheckSteps: init.recheckSteps
      })
      return obs.instrumentPorts(scheduledPorts(peer, nodePorts, { chain, book, shards }, init.jobs))
    }
    await rolesService(makePorts)(peer)
    const svc = getRolesService(peer)!
    peer.control.get('/v1/health', async () => ({ chain: { ...obs.chain, head: await obs.head() ?? obs.chain.head }, failures: obs.recentFailures() }))
    peer.control.get('/v1/progress', () => [...(nodePorts?.progress.values() ?? [])])
    peer.control.get('/v1/disputes', () => disputes?.finished ?? [])
    peer.control.get('/v1/availability', () => availability?.handled ?? [])
    peer.control.get('/v1/chunk-requests', () => chunkRequests?.handled ?? [])
    peer.control.get('/v1/tasks', async () => {
      const records = await book.all()
      let views: Record<number, unknown> = {}
      if (chainPromise != null) {
        try {
          const c = await chain()
          const ids = new Set<number>([...records.map(r => r.taskId), ...(await c.openTasks()).map(Number)])
          views = Object.fromEntries(await Promise.all([...ids].map(async id => [id, jsonSafe(await c.task(id))])))
        } catch (err) { peer.log.debug({ err }, 'task views unavailable') }
      }
      const ids = new Set<number>([...records.map(r => r.taskId), ...Object.keys(views).map(Number)])
      const head = await obs.head()
      return [...ids].sort((a, b) => a - b).map(id => ({ taskId: id, chain: views[id] ?? null, gossip: records.find(r => r.taskId === id) ?? null, head: head ?? null, failedFetches: obs.failedFetches(id) }))
    })
    peer.control.post('/v1/submit', async ({ body }) => {
      const { program, economics } = body as { program?: unknown, economics?: Record<string, unknown> }
      if (economics != null && (typeof economics !== 'object' || Array.isArray(economics))) throw new HttpError(400, 'economics must be an object')
      if (program == null) throw new HttpError(400, 'body must be {"program": <task program>}')
      try { validateProgram(program) } catch (err) { throw new HttpError(400, `invalid task program: ${(err as Error).message}`) }
      const snap = svc.actor.getSnapshot()
      const id = snap.context.active.submitter
      if (id == null) throw new HttpError(409, 'this peer does not have the submitter role; add it with "proofswarm roles add submitter"')
      const sub = (snap.children as Record<string, { getSnapshot: () => { context: { open: number[], error?: string, history: unknown[] } }, subscribe: (fn: (s: { context: { open: number[], error?: string } }) => void) => { unsubscribe: () => void } } | undefined>)[id]!
      const before = new Set(sub.getSnapshot().context.open)
      const prevError = sub.getSnapshot().context.error
      const result = new Promise<{ taskId: number }>((resolve, reject) => {
        const timer = setTimeout(() => { s.unsubscribe(); reject(new HttpError(504, 'the task was not submitted within 10 minutes; see "proofswarm trace --role submitter"')) }, 600_000)
        const s = sub.subscribe(st => {
          const added = st.context.open.find(t => !before.has(t))
          if (added != null) { clearTimeout(timer); s.unsubscribe(); resolve({ taskId: added }) } else if (st.context.error != null && st.context.error !== prevError) { clearTimeout(timer); s.unsubscribe(); reject(new HttpError(502, `submission failed: ${st.context.error}`)) }
        })
      })
      svc.send({ type: 'cmd.submit', spec: { program, economics: economics as never } })
      return await result
    })

    if (init.chainUrl != null && init.account != null) {
      // connect in the background: the peer is useful on the swarm before the chain answers
      void (async () => {
        try {
          const c = await chain()
          peer.log.info({ account: c.address, chain: init.chainUrl }, 'connected to the chain')
          const unsub = await c.onEvents(e => {
            obs.onChainEvent(e, c.accountId)
            const ev = toDomainEvent(e, c.accountId)
            availability?.onChainEvent(e, c.accountId)
            chunkRequests?.onChainEvent(e, c.accountId)
            if (ev != null) svc.send(ev)
            const taskId = (e.data as { taskId?: unknown }).taskId
            if (e.section === 'arbitration' && taskId != null) void book.noteChain(Number(taskId), e.method, { ...jsonSafe(e.data) as object, block: e.blockNumber })
          })
          peer.onStop(unsub)
          // work in flight on chain that this peer's actors should pick up:
          // after a restart (a solver resumes from its last checkpoint) and
          // when a role is added at run time (a new verifier joins open tasks)
          const catchUp = async (): Promise<void> => {
            const me = c.accountId
            const best = await c.bestNumber()
            for (const id of await c.openTasks()) {
              const t = await c.task(id)
              if (t == null) continue
              const taskId = Number(id)
              if (t.phase === 'Solving' && t.solver === me) svc.send({ type: 'chain.solverSelected', taskId, forMe: true })
              if (t.phase === 'Verifying' && t.challengeEnd > best && t.solver !== me) {
                // a verifier acts only where the chain drew it (and it has not voted yet)
                if (!t.verdicts.some(v => v.verifier === me) && await c.myAssignment(id) != null) svc.send({ type: 'chain.verifiersAssigned', taskId, forMe: true })
                for (const v of t.verdicts) if (v.accept && v.verifier !== me) svc.send({ type: 'chain.verdict', taskId, verifier: v.verifier, accept: true, byMe: false })
              }
            }
          }
          await catchUp().catch(err => peer.log.warn({ err }, 'catching up with the chain failed'))
          void availability?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with availability challenges failed'))
          void chunkRequests?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with chunk-sample requests failed'))
          // roles changed at run time are mirrored on chain
          let last = JSON.stringify(peer.roles)
          svc.actor.subscribe(snap => {
            const roles = snap.context.roles as RoleName[]
            if (JSON.stringify(roles) === last) return
            last = JSON.stringify(roles)
            void ensureRegistered(c, peer.peerId, roles, peer.log, signPeer, init.stake)
              .then(async () => { await catchUp() })
              .catch(err => peer.log.warn({ err }, 'could not update roles on chain'))
          })
        } catch (err) {
          peer.log.error(`chain unavailable: ${(err as Error).message}`)
        }
      })()
    }
  }
}

/** JSON-able copy: bigints become decimal strings. */
export function jsonSafe (v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x) => typeof x === 'bigint' ? x.toString() : x))
}
