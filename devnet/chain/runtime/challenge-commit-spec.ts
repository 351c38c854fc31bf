import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// Commit–reveal of challenges, part of the Arbitration pallet interface
// (challenge-commit.ts and challenge-shares.ts implement it; spec.ts splices
// these lists in). Call indices 71–74.

export const CHALLENGE_COMMIT_TYPES: NamedTypes = {
  ChallengeKind: { path: ['pallet_arbitration', 'types', 'ChallengeKind'], variants: [{ name: 'Dispute' }, { name: 'InitialState' }, { name: 'Chunks' }] },
  ChallengeCommit: {
    path: ['pallet_arbitration', 'types', 'ChallengeCommit'],
    fields: [['who', 'AccountId'], ['commitment', 'H256'], ['at', 'u32'], ['seq', 'u64'], ['deposit', 'u128']],
    docs: ['A challenge committed by its hash at block `at` (seq: its place in the order of all commitments); revealable from at + 1 to at + dispute_clock; deposit: dispute_bond, back on the reveal, forfeited at the task\'s end if never revealed']
  },
  ChallengeStatus: {
    path: ['pallet_arbitration', 'types', 'ChallengeStatus'],
    variants: [{ name: 'Pending' }, { name: 'Won' }, { name: 'Closed' }, { name: 'Paid' }],
    docs: ['Pending: it may still slash the solver (an open dispute or request, a ruling awaiting a reveal); Won: it slashed or was ruled right, its share not yet paid; Closed: lost, answered, excused or won by a timeout (no share); Paid: a held share was paid to it']
  },
  ChallengeEntry: {
    path: ['pallet_arbitration', 'types', 'ChallengeEntry'],
    fields: [['who', 'AccountId'], ['kind', 'ChallengeKind'], ['id', 'u64'], ['fact', 'u32'], ['committed', 'bool'], ['seq', 'u64'], ['status', 'ChallengeStatus']],
    docs: ['A challenge of a task, ranked for the slash shares of its fact (kind, fact: the disputed step, the checkpoint step, 0 for the initial state): committed ones by the seq of their commitment, then uncommitted ones by the seq taken when they opened. id: the dispute or request id (0: an initial-state claim)']
  },
  HeldShare: {
    path: ['pallet_arbitration', 'types', 'HeldShare'],
    fields: [['kind', 'ChallengeKind'], ['fact', 'u32'], ['amount', 'u128'], ['paid', 'bool']],
    docs: ['The challenger share of one slash of the solver (and, for a wrong initial state, of the accepts), held in the challenge pot until its fact\'s earliest-ranked winning challenger is known']
  }
}

export const CHALLENGE_COMMIT_STORAGE: StorageSpec[] = [
  { name: 'NextChallengeSeq', type: 'u64', modifier: 'Default', docs: 'The order of challenges: the next commitment\'s (or uncommitted challenge\'s) seq.' },
  { name: 'ChallengeCommits', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<ChallengeCommit>', modifier: 'Default', docs: 'Per task: commitments not yet revealed.' },
  { name: 'TaskChallenges', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<ChallengeEntry>', modifier: 'Default', docs: 'Per task: its disputes, initial-state claims and chunk-sample requests, ranked for the slash shares.' },
  { name: 'HeldShares', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<HeldShare>', modifier: 'Default', docs: 'Per task: challenger shares of slashes held in the challenge pot (account "modlps/chlng") until their fact\'s winners are ranked.' }
]

const SALT = 'salt: 32 bytes the committer chose; the commitment must be the caller\'s own on this task, made in an earlier block and at most dispute_clock blocks ago (its window rule is read at the commitment\'s block).'

export const CHALLENGE_COMMIT_CALLS: CallSpec[] = [
  {
    name: 'commit_challenge',
    index: 71,
    args: [['task_id', 'u64'], ['hash', 'H256']],
    docs: 'Anyone registered but the solver, in the challenge window (or an assigned verifier in its backing grace): commits to a challenge of the task by hash = sha256("proofswarm/challenge/v1" ‖ caller ‖ task_id (u64 LE) ‖ kind (u8: 0 dispute, 1 initial state, 2 chunks) ‖ bytes (disputed_step or checkpoint_step as u32 LE, or the claim bytes) ‖ salt) (protocols/dispute/challenge-commit.ts). A deposit of dispute_bond is reserved: back on the reveal, forfeited at the task\'s end if the commitment was never revealed. At most 16 unrevealed commitments per caller and task. The slash shares of a fact go to its winning challengers in the order of their commitments, before every uncommitted challenge.'
  },
  { name: 'reveal_dispute', index: 72, args: [['task_id', 'u64'], ['defender', 'AccountId'], ['kind', 'DisputeKind'], ['disputed_step', 'u32'], ['salt', 'H256']], docs: 'open_dispute revealing a commitment (commit_challenge, kind 0, bytes: disputed_step). ' + SALT },
  { name: 'reveal_initial_state', index: 73, args: [['task_id', 'u64'], ['claim', 'Vec<u8>'], ['salt', 'H256']], docs: 'challenge_initial_state revealing a commitment (kind 1, bytes: the claim). Heard after the solver failed also when its commitment ranks before every right claim so far. ' + SALT },
  { name: 'reveal_sample_chunks', index: 74, args: [['task_id', 'u64'], ['checkpoint_step', 'u32'], ['salt', 'H256']], docs: 'sample_chunks revealing a commitment (kind 2, bytes: checkpoint_step). Opens a request of its own even while one of that checkpoint is open, when every open one ranks after it. ' + SALT }
]

export const CHALLENGE_COMMIT_EVENTS: EventSpec[] = [
  { name: 'ChallengeCommitted', fields: [['task_id', 'u64'], ['who', 'AccountId'], ['commitment', 'H256'], ['seq', 'u64'], ['reveal_by', 'u32']], docs: 'A challenge committed by its hash; revealable from the next block until `reveal_by`.' },
  { name: 'ChallengeRevealed', fields: [['task_id', 'u64'], ['who', 'AccountId'], ['kind', 'ChallengeKind'], ['seq', 'u64']], docs: 'A commitment was revealed: the challenge it opened ranks by `seq`.' },
  { name: 'ShareHeld', fields: [['task_id', 'u64'], ['kind', 'ChallengeKind'], ['fact', 'u32'], ['amount', 'u128']], docs: 'The challenger share of a slash went to the challenge pot, for the earliest-ranked winning challenger of the fact.' },
  { name: 'SharePaid', fields: [['task_id', 'u64'], ['who', 'AccountId'], ['kind', 'ChallengeKind'], ['fact', 'u32'], ['amount', 'u128']], docs: 'A held share paid: the fact\'s largest unpaid share to its earliest-ranked unpaid winner, once no challenge ranked before it can still win the fact (or the task ended).' },
  { name: 'CommitmentForfeited', fields: [['task_id', 'u64'], ['who', 'AccountId'], ['amount', 'u128']], docs: 'At the task\'s end, the deposit of a commitment never revealed, to the treasury (back to its owner when the task faulted).' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const CHALLENGE_COMMIT_ERRORS: ErrorSpec[] = [
  err('CommitmentNotFound', 'No unrevealed commitment of the caller on this task matches the revealed challenge and salt.'),
  err('CommitmentTooRecent', 'A commitment is revealed in a later block than the one that included it.'),
  err('CommitmentExpired', 'The commitment is older than dispute_clock blocks.'),
  err('TooManyCommitments', 'The caller already has 16 unrevealed commitments on this task.')
]
