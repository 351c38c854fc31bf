import type { CallSpec, ErrorSpec, EventSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// Diverged proofs' part of the Arbitration pallet interface
// (devnet/chain/runtime/divergence.ts implements it; spec.ts splices these
// lists into the pallet). A NaN ends the run (protocols/dispute/nan.ts):
// a solver whose training produced one commits the states before it and
// where it appeared. Call indices 60–64.

export const DIVERGENCE_TYPES: NamedTypes = {
  Divergence: {
    path: ['pallet_arbitration', 'types', 'Divergence'],
    fields: [['entry', 'u32'], ['flat', 'u32']],
    docs: ['Where a diverged run ended: in the op trace of its last step (step_count), entry `entry`\'s output 0 holds its first NaN at flat element `flat`, and no earlier entry\'s output holds one']
  }
}

export const DIVERGENCE_CALLS: CallSpec[] = [
  {
    name: 'commit_diverged',
    index: 60,
    args: [['task_id', 'u64'], ['proof_root', 'H256'], ['final_state_root', 'H256'], ['step_count', 'u32'], ['checkpoints', 'Vec<Vec<u8>>'], ['entry', 'u32'], ['flat', 'u32']],
    docs: 'The selected solver commits a diverged proof: its training produced a NaN while tracing step k = step_count < steps, at entry `entry` of that step\'s op trace (first NaN at flat element `flat` of its output 0). proof_root covers the NaN-free states 0..k (k + 1 leaves), final_state_root is state k. Disputes may name steps 0..k; at step k the trace counts up to the divergence point (docs/disputes.md, "NaN"). An accepting verdict must list step k. Settlement pays the solver solver_reward × k / steps (TaskDiverged).'
  }
]

export const DIVERGENCE_EVENTS: EventSpec[] = [
  { name: 'ProofDiverged', fields: [['task_id', 'u64'], ['step', 'u32'], ['entry', 'u32'], ['flat', 'u32']], docs: 'The solver committed a diverged proof (after its ProofCommitted): the run produced its first NaN at entry `entry`, element `flat`, of step `step`.' },
  { name: 'TaskDiverged', fields: [['task_id', 'u64'], ['step', 'u32'], ['entry', 'u32'], ['flat', 'u32'], ['solver_paid', 'u128']], docs: 'A diverged proof stood: the submitter\'s program produced a NaN at step `step`; the solver was paid solver_reward × step / steps (less any jackpot), the rest of the escrow went back with TaskSettled.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const DIVERGENCE_ERRORS: ErrorSpec[] = [
  err('NotDiverged', 'commit_diverged: step_count must be less than the task\'s steps (a complete run commits with commit_proof).'),
  err('DivergenceNotChecked', 'An accepting verdict on a diverged proof must list its last step (step_count): every verifier replays the diverged step.')
]
