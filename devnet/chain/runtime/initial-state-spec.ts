import type { CallSpec, ErrorSpec, EventSpec } from './spec-types.js'

// The initial-state challenge's part of the Arbitration pallet interface
// (devnet/chain/runtime/initial-state.ts implements it; spec.ts splices these
// lists into the pallet). Call index 30 leaves 13..19 and 23..29 to others.

export const INITIAL_STATE_CALLS: CallSpec[] = [
  {
    name: 'challenge_initial_state',
    index: 30,
    args: [['task_id', 'u64'], ['claim', 'Vec<u8>']],
    docs: 'Anyone registered but the solver, in the challenge window: a claim (CBOR, protocols/dispute/init-claim.ts, at most 64 KiB) opening state root 0 of proof_root (its path, every tensor commitment preimage, the step leaf) down to one element, with the canonical program bytes. The runtime recomputes that element of the program\'s initialisation. Wrong state (tensor count, step leaf, dtype/shape or element bits): the solver is slashed slash_ppm (a share to the caller), every accepting verdict is slashed VerifierSlashPpm, the task fails. Right state: the caller loses dispute_bond (a share to the solver). Once the solver has failed (SolverAlreadyFailed otherwise), still open to an assigned verifier whose reject is not yet backed: a right claim backs it (bond back, slashed 0: the first ruling slashed the solver and the accepts), a wrong one costs the bond.'
  }
]

export const INITIAL_STATE_EVENTS: EventSpec[] = [
  { name: 'InitialStateRuled', fields: [['task_id', 'u64'], ['challenger', 'AccountId'], ['solver_wrong', 'bool'], ['slashed', 'u128'], ['reason', 'Vec<u8>']], docs: 'An initial-state claim was judged: solver_wrong → the solver was slashed `slashed` and the task fails; else the challenger lost `slashed` (its bond). reason: UTF-8.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const INITIAL_STATE_ERRORS: ErrorSpec[] = [
  err('UnsupportedInitializer', 'The program uses an initializer without an element-addressable initial value (only Zeros and the uniform VarianceScaling ones: GlorotUniform, HeUniform, LecunUniform).'),
  err('SolverAlreadyFailed', 'The solver of this task was already ruled against: the task fails anyway (an assigned verifier whose reject is not yet backed may still back it with its own claim).')
]
