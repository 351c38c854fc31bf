import type { DomainEvent } from '../../actors/ports.js'
import { rolesMask, type RoleName } from '../../protocols/roles.js'
import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { Logger } from '../log.js'
import { declarableRuntimes } from '../train/psk-available.js'

// Connects a peer to the chain: its account, its registration (peer id ↔
// account, roles, stake) and the stream of pallet events, translated into the
// domain events role actors understand ("is this about me?").

export interface ChainLinkOptions {
  url: string
  account: string
  /** stake to reserve on registration, in planck; default: the chain's minimum */
  stake?: bigint
  log: Logger
  /** connection attempts (exponential backoff) before giving up */
  attempts?: number
}

export async function connectChain (o: ChainLinkOptions): Promise<ChainClient> {
  // loaded on use: polkadot.js costs start-up time and memory
  const { ChainClient } = await import('../chain/client.js')
  const { routePolkadotLogs } = await import('../chain/polkadot-log.js')
  routePolkadotLogs(o.log)
  const attempts = o.attempts ?? 8
  let last: unknown
  for (let i = 1; i <= attempts; i++) {
    try {
      return await ChainClient.connect({ url: o.url, signer: o.account, timeoutMs: 60_000, log: o.log })
    } catch (err) {
      last = err
      const delay = Math.min(500 * 2 ** (i - 1), 8000)
      o.log.warn(`cannot connect to the chain at ${o.url} (attempt ${i}/${attempts}): ${(err as Error).message}` + (i < attempts ? `; retrying in ${delay} ms` : ''))
      if (i < attempts) await new Promise(resolve => setTimeout(resolve, delay))
    }
  }
  throw new Error(`could not connect to the chain at ${o.url}: ${(last as Error)?.message}. Is "proofswarm chain" running there? (pass --chain <ws-url>)`)
}

/** Registers the peer on chain if needed and keeps its roles and declared runtimes (those this machine loads) in sync. */
export async function ensureRegistered (
  chain: ChainClient, peerId: string, roles: readonly RoleName[], log: Logger,
  signPeer: (payload: Uint8Array) => Uint8Array | Promise<Uint8Array>, stake?: bigint,
  runtimes: readonly string[] = declarableRuntimes()
): Promise<void> {
  const mask = Math.max(rolesMask(roles), 0)
  const node = await chain.node()
  if (node == null) {
    if (mask === 0) return // nothing to do on chain without a role
    const params = await chain.params()
    const amount = stake ?? params.minStake
    await chain.registerNode(peerId, mask, amount, signPeer)
    log.info({ account: chain.address, stake: amount.toString(), roles }, 'registered on chain')
    await ensureRuntimes(chain, runtimes, log)
    return
  }
  // Vec<u8> comes back as 0x-hex of the UTF-8 peer id
  const registered = /^0x[0-9a-f]*$/i.test(node.peerId) ? Buffer.from(node.peerId.slice(2), 'hex').toString('utf8') : node.peerId
  if (registered !== peerId) {
    throw new Error(`chain account ${chain.address} is registered for peer ${registered}, not this peer (${peerId}); use another --account`)
  }
  if (node.roles !== mask && mask !== 0) {
    await chain.setRoles(mask)
    log.info({ roles }, 'roles updated on chain')
  }
  await ensureRuntimes(chain, runtimes, log)
}

/**
 * The chain's list of the runtimes this node runs (those needing a declaration) made `runtimes`:
 * what this machine loads now (an addon built or lost since the last start changes it), so the
 * chain selects and draws it only for tasks it can run at full speed.
 */
async function ensureRuntimes (chain: ChainClient, runtimes: readonly string[], log: Logger): Promise<void> {
  // a declaration that fails leaves the peer drawn only for runtimes that need none: no reason to stop following the chain
  try {
    const declared = await chain.nodeRuntimes()
    if (declared.length === runtimes.length && runtimes.every(r => declared.includes(r))) return
    await chain.setRuntimes(runtimes)
    log.info({ runtimes }, 'runtimes declared on chain (the chain draws this peer only for tasks on these or on runtimes that need no declaration)')
  } catch (err) {
    log.warn({ err, runtimes }, 'could not declare this peer\'s runtimes on chain: it is drawn only for tasks on runtimes that need no declaration')
  }
}

const num = (v: unknown): number => typeof v === 'bigint' ? Number(v) : Number(v)

/** Translates a pallet event into the domain event role actors react to (or none). */
export function toDomainEvent (e: ChainEvent, me: string): DomainEvent | undefined {
  if (e.section !== 'arbitration') return undefined
  const d = e.data as Record<string, unknown>
  switch (e.method) {
    case 'SolverSelected': return { type: 'chain.solverSelected', taskId: num(d.taskId), forMe: d.solver === me }
    case 'ProofCommitted': return { type: 'chain.proofCommitted', taskId: num(d.taskId), byMe: d.solver === me }
    case 'VerifiersAssigned': return { type: 'chain.verifiersAssigned', taskId: num(d.taskId), forMe: Array.isArray(d.verifiers) && (d.verifiers as unknown[]).includes(me) }
    case 'VerdictReopened': return { type: 'chain.verdictReopened', taskId: num(d.taskId), forMe: d.verifier === me }
    case 'VerdictSubmitted': return { type: 'chain.verdict', taskId: num(d.taskId), verifier: String(d.verifier), accept: d.accept === true, byMe: d.verifier === me }
    case 'DisputeOpened': return { type: 'chain.disputeOpened', taskId: num(d.taskId), disputeId: num(d.disputeId), againstMe: d.defender === me, byMe: d.challenger === me }
    case 'SolverTimedOut': return { type: 'chain.solverReplaced', taskId: num(d.taskId), wasMe: d.solver === me }
    case 'TaskReleased': return { type: 'chain.solverReplaced', taskId: num(d.taskId), wasMe: d.solver === me }
    case 'TaskSettled': return { type: 'chain.taskSettled', taskId: num(d.taskId) }
    // no quorum of verdicts: nobody is paid, the task is over all the same
    case 'TaskUnverified': return { type: 'chain.taskSettled', taskId: num(d.taskId) }
    // nobody took it in time (no solver, or too little verifier stake): refunded, over
    case 'TaskExpired': return { type: 'chain.taskSettled', taskId: num(d.taskId) }
    // the chain quarantined it after a runtime fault: refunded, over
    case 'TaskFaulted': return { type: 'chain.taskSettled', taskId: num(d.taskId) }
    default: return undefined
  }
}
