import type { ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// The verifier-assignment part of the Arbitration pallet interface
// (assignment.ts and verifier-rounds.ts implement it; spec.ts splices these
// lists in). No calls: the chain draws verifiers in on_initialize.

export const ASSIGNMENT_TYPES: NamedTypes = {
  AssignmentStatus: {
    path: ['pallet_arbitration', 'types', 'AssignmentStatus'],
    variants: [{ name: 'Active' }, { name: 'Lapsed' }, { name: 'Released' }],
    docs: ['Active: its verdict counts; Lapsed: silent (no verdict, no evidence) or a reject without its own evidence by the deadline: penalized, replaced; Released: its accept was slashed as blind: replaced, no further penalty']
  },
  VerifierAssignment: {
    path: ['pallet_arbitration', 'types', 'VerifierAssignment'],
    fields: [['verifier', 'AccountId'], ['round', 'u8'], ['seed_block', 'u32'], ['deadline', 'u32'], ['backed', 'bool'], ['status', 'AssignmentStatus']],
    docs: ['seed_block: the block whose hash drew this verifier and seeds its sample; deadline: last block for its verdict (never past challenge_end) and its evidence; a reject submitted in time, not yet backed, moves it to at least that block + the backing grace (late-backing.ts); backed: it opened a dispute, availability challenge or initial-state claim of its own on the task while assigned']
  },
  TaskAssignments: {
    path: ['pallet_arbitration', 'types', 'TaskAssignments'],
    fields: [['round', 'u8'], ['draw_at', 'u32'], ['seed_block', 'u32'], ['verifiers', 'Vec<VerifierAssignment>']],
    docs: ['round: the latest round; draw_at: the block in whose on_initialize the next draw happens (0: none pending); seed_block: that draw\'s randomness block; verifiers: every assignment of every round']
  }
}

export const ASSIGNMENT_STORAGE: StorageSpec[] = [
  { name: 'Assignments', key: 'u64', hasher: 'Twox64Concat', type: 'TaskAssignments', modifier: 'Optional', docs: 'Per task: the verifiers the chain drew, by round (only their verdicts count and are paid).' }
]

export const ASSIGNMENT_EVENTS: EventSpec[] = [
  { name: 'VerifiersAssigned', fields: [['task_id', 'u64'], ['verifiers', 'Vec<AccountId>'], ['round', 'u8'], ['seed_block', 'u32'], ['deadline', 'u32']], docs: 'Verifiers drawn stake-weighted from the hash of seed_block (never the submitter, the solver or an account drawn before for the task); each one\'s sample is seeded by the same hash and its account. Their verdicts are due by `deadline`.' },
  { name: 'AssignmentLapsed', fields: [['task_id', 'u64'], ['verifier', 'AccountId'], ['round', 'u8'], ['penalty', 'u128']], docs: 'An assigned verifier\'s slot failed: no verdict by its deadline, a reject without evidence of its own, a reject whose own dispute or initial-state claim it lost, or no verdict after its availability challenge was served on chain (VerdictReopened): no reward, `penalty` (dispute_bond + solver_reward) of its stake to the treasury, and it is replaced.' },
  { name: 'AssignmentReleased', fields: [['task_id', 'u64'], ['verifier', 'AccountId'], ['round', 'u8']], docs: 'An assigned verifier\'s verdict did not stand, but its accept was already slashed: no reward, no further penalty, and it is replaced.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const ASSIGNMENT_ERRORS: ErrorSpec[] = [
  err('NotAssigned', 'The caller is not a verifier the chain assigned to this task (VerifiersAssigned), or its assignment is over: only assigned verifiers give verdicts. Anyone registered may still open a dispute.')
]
