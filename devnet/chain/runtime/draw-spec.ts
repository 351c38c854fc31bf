import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// The settlement draw's part of the Arbitration pallet interface
// (draw-reveal.ts implements it; spec.ts splices these lists into the
// pallet): before a verified task is paid on a chain with forced errors, its
// solver reveals its private draw, and pays the jackpot if the draw ordered a
// forced error, caught or not. Call index 70.

export const DRAW_TYPES: NamedTypes = {
  DrawRequest: {
    path: ['pallet_arbitration', 'types', 'DrawRequest'],
    fields: [['deadline', 'u32'], ['revealed', 'bool'], ['forced_step', 'Option<u32>'], ['forced_steps', 'Vec<u32>']],
    docs: ['A verified task waiting for its solver\'s draw: reveal_draw by `deadline`; once revealed (reveal_draw), forced_steps are the steps the draw ordered, ascending (empty: no forced error) and forced_step the first of them']
  }
}

export const DRAW_STORAGE: StorageSpec[] = [
  { name: 'DrawRequests', key: 'u64', hasher: 'Twox64Concat', type: 'DrawRequest', modifier: 'Optional', docs: 'Per task whose challenge window ended with a quorum of standing verdicts on a chain with forced_error_ppm > 0: its solver\'s draw, requested at settlement (DrawRequested). Removed when the task settles.' }
]

export const DRAW_CALLS: CallSpec[] = [
  {
    name: 'reveal_draw',
    index: 70,
    args: [['task_id', 'u64'], ['vrf_outputs', 'Vec<[u8; 32]>'], ['vrf_proofs', 'Vec<[u8; 64]>']],
    docs: 'The task\'s solver reveals its forced-error draw at settlement: one sr25519 VRF per pick, pick 1 first, 4 of them (context "proofswarm/forced-error/v1", over task id ‖ selection_seed ‖ pick, protocols/dispute/forced-error.ts), each checked as reveal_forced_error checks one. Only while the task\'s DrawRequest is open (DrawNotRequested otherwise: never during the challenge window, when a verifier still to be drawn must not learn the steps). The task settles in the next block: a draw that ordered forced errors (each pick independently with probability forced_error_ppm, at a uniform markable step; forcedErrorsFromOutputs) costs the solver the jackpot (min(jackpot, earned reward), split across them) whether or not they were caught and whether or not the solver committed them (each uncaught one\'s part to the treasury); a draw that ordered none, or only steps past a diverged proof\'s committed transitions, pays the solver in full. Not revealing by the deadline costs the jackpot too.'
  }
]

export const DRAW_EVENTS: EventSpec[] = [
  { name: 'DrawRequested', fields: [['task_id', 'u64'], ['deadline', 'u32']], docs: 'The task is verified and about to settle on a chain with forced errors: its solver must reveal_draw by block `deadline`, or pay the jackpot as if its draw had ordered a forced error.' },
  { name: 'DrawRevealed', fields: [['task_id', 'u64'], ['solver', 'AccountId'], ['forced_step', 'Option<u32>'], ['forced_steps', 'Vec<u32>']], docs: 'The solver revealed its draw: forced_steps are the steps it ordered, ascending (the jackpot is owed, split across them), forced_step the first of them; none: paid in full.' },
  { name: 'JackpotForfeited', fields: [['task_id', 'u64'], ['amount', 'u128']], docs: 'At settlement: the solver owed the jackpot (its draw ordered forced errors, or it did not reveal its draw in time) and no verifier drawn to check a forced step won that step\'s part (all of it when the draw was not revealed): `amount`, out of the solver\'s reward, went to the treasury.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const DRAW_ERRORS: ErrorSpec[] = [
  err('DrawNotRequested', 'reveal_draw: the task awaits no draw (none requested yet, already revealed, or its deadline passed).')
]
