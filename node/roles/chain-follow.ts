import type { RoleName } from '../../actors/supervisor.js'
import type { AvailabilityResponder } from '../availability/responder.js'
import type { DatasetResponder } from '../availability/dataset-responder.js'
import type { ChainClient } from '../chain/client.js'
import type { ChunkResponder } from '../erasure/responder.js'
import type { DrawRevealer } from '../dispute/draw-revealer.js'
import type { Peer } from '../peer.js'
import { ensureRegistered, toDomainEvent } from './chain-link.js'
import { jsonSafe } from './json-safe.js'
import type { Observability } from './observability.js'
import type { RolesService } from './service.js'
import type { TaskBook } from './task-book.js'

// Once a peer is connected to the chain: pallet events go to the actors, the
// responders, the task book and the metrics; work already in flight on chain
// is picked up; roles changed at run time are registered on chain.

export interface ChainFollowDeps {
  peer: Peer
  svc: RolesService
  book: TaskBook
  obs: Observability
  availability?: AvailabilityResponder
  datasets?: DatasetResponder
  chunkRequests?: ChunkResponder
  draws?: DrawRevealer
  signPeer: (payload: Uint8Array) => Promise<Uint8Array>
  stake?: bigint
}

export async function followChain (c: ChainClient, d: ChainFollowDeps): Promise<void> {
  const { peer, svc, book, obs, availability, datasets, chunkRequests, draws, signPeer } = d
  const unsub = await c.onEvents(e => {
    obs.onChainEvent(e, c.accountId)
    const ev = toDomainEvent(e, c.accountId)
    availability?.onChainEvent(e, c.accountId)
    datasets?.onChainEvent(e, c.accountId)
    chunkRequests?.onChainEvent(e, c.accountId)
    draws?.onChainEvent(e)
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
      if (t.phase === 'Verifying' && t.solver !== me) {
        // a verifier acts only where the chain drew it: where it has not voted yet, and where its reject
        // rests on an availability or dataset challenge of its own still open (a node that went down
        // meanwhile no longer followed it, and once the serve withdrew the reject it never voted again: its
        // slot lapsed, −(B + R) and its deposit); its verify job meets its own challenge again and follows it
        // (a reopened verdict may be given past challenge_end, by the assignment's own deadline)
        const mine = t.verdicts.find(v => v.verifier === me && !v.void)
        const a = await c.myAssignment(id)
        const resume = a != null && (mine === undefined ? a.deadline > best : !mine.accept && await awaitsOwnChallenge(c, id, me))
        if (resume) svc.send({ type: 'chain.verifiersAssigned', taskId, forMe: true })
        if (t.challengeEnd > best) for (const v of t.verdicts) if (v.accept && v.verifier !== me) svc.send({ type: 'chain.verdict', taskId, verifier: v.verifier, accept: true, byMe: false })
      }
    }
  }
  await catchUp().catch(err => peer.log.warn({ err }, 'catching up with the chain failed'))
  void availability?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with availability challenges failed'))
  void datasets?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with dataset challenges failed'))
  void chunkRequests?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with chunk-sample requests failed'))
  void draws?.catchUp().catch(err => peer.log.warn({ err }, 'catching up with draw requests failed'))
  // roles changed at run time are mirrored on chain
  let last = JSON.stringify(peer.roles)
  svc.actor.subscribe(snap => {
    const roles = snap.context.roles as RoleName[]
    if (JSON.stringify(roles) === last) return
    last = JSON.stringify(roles)
    void ensureRegistered(c, peer.peerId, roles, peer.log, signPeer, d.stake)
      .then(async () => { await catchUp() })
      .catch(err => peer.log.warn({ err }, 'could not update roles on chain'))
  })
}

/** Is an availability or dataset challenge `me` opened on the task still open? */
async function awaitsOwnChallenge (c: ChainClient, taskId: bigint, me: string): Promise<boolean> {
  for (const [, id] of await c.openAvailability(taskId)) if ((await c.availabilityChallenge(id))?.challenger === me) return true
  for (const id of await c.openDatasetChallenges(taskId)) if ((await c.datasetChallenge(id))?.challenger === me) return true
  return false
}
