import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// The data-availability challenge's part of the Arbitration pallet interface
// (devnet/chain/runtime/availability.ts implements it; spec.ts splices these
// lists into the pallet). Kept apart so spec.ts only needs one line per list.
// Call indices start at 20 to leave room for other Arbitration calls.

export const AVAILABILITY_TYPES: NamedTypes = {
  AvailabilityStatus: { path: ['pallet_arbitration', 'types', 'AvailabilityStatus'], variants: [{ name: 'Open' }, { name: 'Answered' }, { name: 'TimedOut' }] },
  AvailabilityChallenge: {
    path: ['pallet_arbitration', 'types', 'AvailabilityChallenge'],
    fields: [
      ['task_id', 'u64'], ['challenger', 'AccountId'], ['solver', 'AccountId'], ['checkpoint_step', 'u32'], ['deposit', 'u128'],
      ['opened_at', 'u32'], ['deadline', 'u32'], ['samples', 'u32'], ['status', 'AvailabilityStatus'], ['response_hash', 'H256']
    ]
  }
}

export const AVAILABILITY_STORAGE: StorageSpec[] = [
  { name: 'NextAvailabilityId', type: 'u64', modifier: 'Default', docs: 'Id of the next data-availability challenge.' },
  { name: 'AvailabilityChallenges', key: 'u64', hasher: 'Twox64Concat', type: 'AvailabilityChallenge', modifier: 'Optional', docs: 'Data-availability challenges by id.' },
  { name: 'OpenAvailability', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<(u32, u64)>', modifier: 'Default', docs: 'Per task: (checkpoint step, challenge id) of every open availability challenge.' },
  { name: 'AnsweredAvailability', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u64>', modifier: 'Default', docs: 'Per task: answered challenges whose deposits are settled with the task.' }
]

export const AVAILABILITY_CALLS: CallSpec[] = [
  { name: 'challenge_availability', index: 20, args: [['task_id', 'u64'], ['checkpoint_step', 'u32']], docs: 'A node that cannot obtain a valid checkpoint at checkpoint_step challenges the solver to serve that state on chain (respond_availability; a deposit = dispute_bond is reserved). One open challenge per checkpoint (AvailabilityAlreadyOpen), but an assigned verifier whose reject is not yet backed, or rests on open challenges of its own, may open its own of an already challenged checkpoint; none of a checkpoint already served (CheckpointServed), and none past challenge_end from a verifier in its served grace. Past challenge_end (and its backing grace), an assigned verifier whose standing reject rests on availability challenges of its own still open may open more, by its assignment\'s deadline: every checkpoint its sample needs is challenged at once, and its verdict reopens only once all its challenges are served. An active assigned verifier challenges only checkpoints its own required sample\'s replay may start from (CheckpointNotNeeded) and none after its own accept (ChallengeAfterAccept); anyone else any checkpoint, for its deposit.' },
  { name: 'respond_availability', index: 21, args: [['challenge_id', 'u64'], ['response', 'Vec<u8>']], docs: 'The solver serves the whole checkpoint on chain, by its deadline, in parts (CBOR, protocols/availability/serve.ts, version 2, at most 1 MiB each): every part carries the state\'s tensor headers and their path to leaf checkpoint_step of proof_root, and the next row-tree leaves of the state in order (tensor by tensor) with their paths to the tensor\'s row root. The challenge is answered when every leaf is on chain (AvailabilityServed events), and with it every open challenge of the same checkpoint; possession alone (sampled rows) no longer answers. A part of at least 256 KiB of leaves, the serve not complete, moves the deadline of every open challenge of the task (of any checkpoint: the solver serves several one after another) to at least its block + 1 + the answer window (max(dispute_clock, challenge_window / 4)).' },
  { name: 'availability_timeout', index: 22, args: [['challenge_id', 'u64']], docs: 'Anyone, after the deadline of an unanswered challenge: the solver is slashed and the task fails.' }
]

/** Appended at the end of the pallet's calls (spec.ts). */
export const AVAILABILITY_MANY_CALLS: CallSpec[] = [
  { name: 'challenge_availability_many', index: 79, args: [['task_id', 'u64'], ['checkpoint_steps', 'Vec<u32>']], docs: 'challenge_availability of every step in checkpoint_steps, in order, in one call: all are opened or none (the first error). A verifier whose sample needs several checkpoints it cannot use challenges them together: opened in separate blocks, the solver could serve the first before the next was in, reopening the verifier\'s verdict (VerdictReopened) with the rest unchallenged, and past challenge_end a served verifier opens no more. NotCheckpointStep for an empty list; an assigned verifier\'s list holds only checkpoints its required sample needs (CheckpointNotNeeded).' }
]

export const AVAILABILITY_EVENTS: EventSpec[] = [
  { name: 'AvailabilityChallenged', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['challenger', 'AccountId'], ['solver', 'AccountId'], ['checkpoint_step', 'u32'], ['deposit', 'u128'], ['deadline', 'u32']], docs: 'Answered only by serving the checkpoint on chain (respond_availability parts) by `deadline`.' },
  { name: 'AvailabilityAnswered', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['solver', 'AccountId'], ['response', 'Vec<u8>']], docs: 'The checkpoint is served: every leaf of the state is on chain (the AvailabilityServed parts; `response` is empty). The deposit stays reserved until the task ends (AvailabilityDepositSettled).' },
  { name: 'AvailabilityTimedOut', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['solver', 'AccountId'], ['slashed', 'u128']], docs: 'The solver did not answer in time: slashed, the task fails.' },
  { name: 'AvailabilityDepositSettled', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['to', 'AccountId'], ['amount', 'u128']], docs: 'At the end of the task, the deposit of an answered (served) challenge: an assigned verifier\'s back to it if a verdict of its stood (or, the task failed, its accept was not slashed), else to the solver; anyone else\'s to the solver if the task was verified anyway, back if not.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const AVAILABILITY_ERRORS: ErrorSpec[] = [
  err('NotCheckpointStep', 'The step is not a checkpoint step of the task (a multiple of checkpoint_every, or the last step).'),
  err('AvailabilityAlreadyOpen', 'An availability challenge of this checkpoint is already open (an assigned verifier whose reject is not yet backed may still open its own).'),
  err('AvailabilityNotFound', 'No availability challenge with this id.'),
  err('AvailabilityClosed', 'The availability challenge was already answered or timed out.'),
  err('SamplesNotReady', 'The sample positions come from the hash of the block that included the challenge: answer from the next block on.'),
  err('ResponseTooLate', 'The availability challenge\'s deadline has passed.'),
  err('ResponseTooLarge', 'A serve part exceeds 1 MiB.'),
  err('InvalidAvailabilityResponse', 'The serve part is malformed, not version 2, has other tensor headers than the parts before, or does not start at the next leaf not yet served.'),
  err('AvailabilityProofInvalid', 'The tensor headers do not make the committed state root of the checkpoint, or a leaf does not verify against its tensor\'s commitment.'),
  err('DeadlineNotReached', 'The availability challenge can still be answered.')
]

/** Appended at the end of the pallet's errors (spec.ts): the bound on an assigned verifier's challenges. */
export const AVAILABILITY_NEED_ERRORS: ErrorSpec[] = [
  err('CheckpointNotNeeded', 'An assigned verifier may challenge only the checkpoints its own required sample\'s replay may start from: checkpoint 0 (an initial-state claim reads it), for each sampled unit the latest checkpoint at or before its start, and a diverged proof\'s last state (protocols/verification/checkpoint-steps.ts challengeableCheckpoints). Anyone else may challenge any checkpoint, for its deposit.'),
  err('ChallengeAfterAccept', 'An assigned verifier whose accept stands vouched that it replayed from its checkpoints: it challenges none.')
]
