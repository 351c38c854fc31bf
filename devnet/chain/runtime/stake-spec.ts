import type { EventSpec, StorageSpec } from './spec-types.js'

// The part of the Arbitration pallet interface that ties a task to the
// verifier stake answering for it (verifier-stake.ts implements it; spec.ts
// splices these lists in). No calls: reservation, expiry and forfeits happen
// in on_initialize.

/**
 * blocks a task may stay Unassigned (no solver, or not enough verifier stake to answer for it)
 * before it expires with a full refund: 30 min at the devnet's 500 ms blocks, longer than the
 * slowest task of the task-throughput bench (1092 s), which a task waiting for bound verifier
 * stake to free up may have to wait out
 */
export const UNASSIGNED_TIMEOUT = 3600

export const STAKE_STORAGE: StorageSpec[] = [
  { name: 'VerifierReservations', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<AccountId>', modifier: 'Default', docs: 'Per task, from its solver\'s selection to its first verifier draw: verifier_count verifiers whose free stake covered dispute_bond + solver_reward then. Their stake stays bound (they cannot unregister) and they are candidates of the first draw whatever their stake or roles have become since.' }
]

export const STAKE_EVENTS: EventSpec[] = [
  { name: 'AwaitingVerifierStake', fields: [['task_id', 'u64'], ['needed', 'u128'], ['verifiers', 'u32']], docs: 'No solver is selected yet: fewer than verifier_count registered verifiers (other than the submitter and the solver drawn) have `needed` (dispute_bond + solver_reward) of stake not bound elsewhere; `verifiers` is how many do. Retried every block until the task expires.' },
  { name: 'TaskExpired', fields: [['task_id', 'u64'], ['refunded', 'u128']], docs: 'The task stayed Unassigned for UnassignedTimeout blocks (no solver, or not enough verifier stake to answer for it): it ends Expired and its whole escrow goes back to the submitter.' }
]
