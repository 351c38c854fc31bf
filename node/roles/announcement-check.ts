import type { MessageOf } from '../../protocols/messages/index.js'
import type { ChainClient } from '../chain/client.js'
import type { CheckResult } from '../p2p/gossip.js'
import type { AnnouncementCheck } from './task-book.js'

// Gossip announcements are only as true as their source. A task announcement
// must come from the peer the on-chain submitter registered, name the
// program hash and steps the chain holds; a proof announcement from the
// task's solver, with the committed proof root; a verdict from the verifier it
// names, once the chain holds it; a dispute notice from its challenger or
// defender, about a dispute the chain holds on that task. A contradiction is
// REJECTed (the sender's gossipsub score drops); what the chain does not show
// yet is IGNOREd (no penalty: our view of the chain may lag).
//
// Every one of them names its author's peer, and that peer must be registered
// on chain, whatever else the chain shows yet: an IGNORE costs its sender
// nothing, and gossip rates are per author (node/p2p/gossip-rate.ts), so a
// message about a task not yet on chain, signed by a key made for it alone,
// was a free chain query at every peer, one key per message.

const same = (a: string, b: string): boolean => a.replace(/^0x/, '').toLowerCase() === b.replace(/^0x/, '').toLowerCase()
const ZERO = '0'.repeat(64)
/** task ids this far past the chain's next id cannot be submissions our view has not caught up with */
const LAG_TASKS = 16n

export function announcementCheck (chain: ChainClient): AnnouncementCheck {
  return async (topic, msg, author): Promise<CheckResult> => {
    if (topic === 'tasks') {
      const m = msg as MessageOf<'tasks'>
      if (author !== undefined && author !== m.submitter) return 'reject'
      // from a registered peer or from nobody (see below)
      const owner = await chain.peerOwner(m.submitter)
      if (owner == null) return 'reject'
      const t = await chain.task(m.taskId)
      // not on chain yet: our view may lag a few blocks; far beyond the next id, it is made up
      if (t == null) return await unknownTask(chain, m.taskId)
      if (!same(t.programHash, m.programHash) || t.steps !== m.steps) return 'reject'
      return owner === t.submitter ? 'accept' : 'reject'
    }
    if (topic === 'proofs') {
      const m = msg as MessageOf<'proofs'>
      if (author !== undefined && author !== m.solver) return 'reject'
      const owner = await chain.peerOwner(m.solver)
      if (owner == null) return 'reject'
      const t = await chain.task(m.taskId)
      if (t == null || same(t.proofRoot, ZERO)) return 'ignore'
      if (owner !== t.solver) return 'reject'
      return same(t.proofRoot, m.proofRoot) && same(t.finalStateRoot, m.finalStateRoot) ? 'accept' : 'reject'
    }
    // a notice about a task the chain does not have is dropped like a task announcement:
    // stored and relayed on its form alone, anyone could write a record per task id into
    // every peer's database
    if (topic === 'verdicts') {
      const m = msg as MessageOf<'verdicts'>
      if (author !== undefined && author !== m.verifier) return 'reject'
      const owner = await chain.peerOwner(m.verifier)
      if (owner == null) return 'reject' // not a registered peer: it cannot have been drawn
      const t = await chain.task(m.taskId)
      if (t == null) return await unknownTask(chain, m.taskId)
      // the verdict is announced once it is on chain; our view may lag a block
      const onChain = t.verdicts.find(v => same(v.verifier, owner))
      if (onChain == null) return 'ignore'
      return onChain.accept === m.accept ? 'accept' : 'reject'
    }
    if (topic === 'disputes') {
      const m = msg as MessageOf<'disputes'>
      if (author !== undefined && author !== m.challenger && author !== m.defender) return 'reject'
      const [c, f] = await Promise.all([chain.peerOwner(m.challenger), chain.peerOwner(m.defender)])
      if (c == null || f == null) return 'reject'
      const d = await chain.dispute(m.disputeId)
      if (d == null) return await chain.task(m.taskId) == null ? await unknownTask(chain, m.taskId) : 'ignore'
      if (BigInt(d.taskId) !== BigInt(m.taskId)) return 'reject'
      return same(c, d.challenger) && same(f, d.defender) ? 'accept' : 'reject'
    }
    return 'accept'
  }
}

/** Not on chain: our view may lag a few submissions; far beyond the next id, it is made up. */
async function unknownTask (chain: ChainClient, taskId: number): Promise<CheckResult> {
  return BigInt(taskId) >= await chain.nextTaskId() + LAG_TASKS ? 'reject' : 'ignore'
}
