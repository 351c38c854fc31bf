import type { StorageSpec } from './spec-types.js'

// The defender's tape queue, part of the Arbitration pallet interface
// (tape-queue.ts implements it; spec.ts splices the list in). No calls:
// open_dispute queues, force_move and answer_move read it.

export const TAPE_QUEUE_STORAGE: StorageSpec[] = [
  {
    name: 'TapeQueue',
    key: 'AccountId',
    hasher: 'Blake2_128Concat',
    type: 'u32',
    modifier: 'Optional',
    docs: 'Per defender: the block by which the re-runs of every dispute opened against it so far are done, each taking its tape allowance after those opened before it. A dispute opened against a defender whose queue ends after the current block starts its re-run there (TapeStart). At most the last u32 block, like the deadlines and dues derived from it: a full queue delays a dispute, never refuses it.'
  },
  {
    name: 'TapeStart',
    key: 'u64',
    hasher: 'Twox64Concat',
    type: 'u32',
    modifier: 'Optional',
    docs: 'Per open dispute opened while its defender\'s queue was busy: the block its re-run starts. Its defender\'s moves that carry a tape allowance (the commit; a segment dispute\'s segment and commit) are due no earlier than this block + allowance + dispute_clock, and its deadline is later by the wait. Absent: the re-run starts at opened_at. Removed when the dispute ends.'
  }
]
