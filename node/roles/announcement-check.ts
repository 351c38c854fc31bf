import type { MessageOf } from '../../protocols/messages/index.js'
import type { ChainClient } from '../chain/client.js'
import type { CheckResult } from '../p2p/gossip.js'
import type { AnnouncementCheck } from './task-book.js'

// Gossip announcements are only as true as their source. A task announcement
// must come from the peer the on-chain submitter registered, name the
// program hash and steps the chain holds; a proof announcement from the
// task's solver, with the committed proof root; a verdict from the verifier it
// names. A contradiction is REJECTed (the sender's gossipsub score drops); a
// task or proof the chain does not show yet is IGNOREd (no penalty: our view
// of the chain may lag).

const same = (a: string, b: string): boolean => a.replace(/^0x/, '').toLowerCase() === b.replace(/^0x/, '').toLowerCase()
const ZERO = '0'.repeat(64)
/** task ids this far past the chain's next id cannot be submissions our view has not caught up with */
const LAG_TASKS = 16n

export function announcementCheck (chain: ChainClient): AnnouncementCheck {
  return async (topic, msg, author): Promise<CheckResult> => {
    if (topic === 'tasks') {
      const m = msg as MessageOf<'tasks'>
      if (author !== undefined && author !== m.submitter) return 'reject'
      const t = await chain.task(m.taskId)
      // not on chain yet: our view may lag a few blocks; far beyond the next id, it is made up
      if (t == null) return BigInt(m.taskId) >= await chain.nextTaskId() + LAG_TASKS ? 'reject' : 'ignore'
      if (!same(t.programHash, m.programHash) || t.steps !== m.steps) return 'reject'
      return await chain.peerOwner(m.submitter) === t.submitter ? 'accept' : 'reject'
    }
    if (topic === 'proofs') {
      const m = msg as MessageOf<'proofs'>
      if (author !== undefined && author !== m.solver) return 'reject'
      const t = await chain.task(m.taskId)
      if (t == null || same(t.proofRoot, ZERO)) return 'ignore'
      if (await chain.peerOwner(m.solver) !== t.solver) return 'reject'
      return same(t.proofRoot, m.proofRoot) && same(t.finalStateRoot, m.finalStateRoot) ? 'accept' : 'reject'
    }
    if (topic === 'verdicts') {
      const m = msg as MessageOf<'verdicts'>
      return author !== undefined && author !== m.verifier ? 'reject' : 'accept'
    }
    return 'accept'
  }
}
