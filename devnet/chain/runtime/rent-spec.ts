import type { ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// The capacity-rent part of the Arbitration pallet interface (capacity-rent.ts
// implements it; spec.ts splices these lists in). No calls: the deposit is
// taken by submit_task, the rent accrues and is paid in on_initialize.

export const RENT_TYPES: NamedTypes = {
  CapacityRent: {
    path: ['pallet_arbitration', 'types', 'CapacityRent'],
    fields: [['deposit', 'u128'], ['solving', 'u128'], ['held', 'u128']],
    docs: ['deposit: reserved from the submitter at submission, the rent of the longest hold its parameters allow; solving: stake-blocks bound by the current selection while Solving (the solver\'s, should it hand the task back or miss its deadline); held: stake-blocks the submitter pays for']
  }
}

export const RENT_STORAGE: StorageSpec[] = [
  { name: 'CapacityRents', key: 'u64', hasher: 'Twox64Concat', type: 'CapacityRent', modifier: 'Optional', docs: 'Per open task: its rent deposit and the verifier stake-blocks it has held (each block, the dispute_bond + solver_reward of every verifier reserved for it or assigned to it). Removed when the task ends and its rent is paid.' }
]

export const RENT_EVENTS: EventSpec[] = [
  { name: 'CapacityRentPaid', fields: [['task_id', 'u64'], ['who', 'AccountId'], ['amount', 'u128'], ['stake_blocks', 'u128']], docs: 'Rent for verifier stake a task held bound (stake_blocks: stake × blocks), to the treasury: by the submitter when the task ends (at most its deposit, the rest of which goes back), or by a solver that handed the task back or missed its deadline, for the blocks its selection held the reservation.' }
]

export const RENT_ERRORS: ErrorSpec[] = [
  { name: 'InsufficientRentDeposit', docs: 'The free balance cannot cover the task\'s capacity-rent deposit (capacity_rent_ppb × verifier_count × (dispute_bond + solver_reward) × (solve_timeout + (MaxVerifyExtensions + 1) × (challenge_window + 1) + 2), in billionths).' }
]
