import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// Dataset availability challenges, part of the Arbitration pallet interface
// (dataset-availability.ts implements it; spec.ts appends these lists at the
// end of its own). Call indices 80–82.

export const DATASET_TYPES: NamedTypes = {
  DatasetChallenge: {
    path: ['pallet_arbitration', 'types', 'DatasetChallenge'],
    fields: [
      ['task_id', 'u64'], ['challenger', 'AccountId'], ['submitter', 'AccountId'], ['deposit', 'u128'], ['opened_at', 'u32'], ['deadline', 'u32'],
      ['steps', 'Vec<u32>'], ['served', 'u32'], ['total', 'u32'],
      ['seed', 'u32'], ['train_size', 'u32'], ['batch_size', 'u32'], ['row_size', 'u32'], ['classes', 'u32'], ['status', 'AvailabilityStatus']
    ],
    docs: ['An assigned verifier\'s challenge of the task\'s dataset: the submitter serves the rows of the batches of `steps` (0-based; the steps the verifier\'s required sample replays) on chain, `total` = steps × batch_size rows, `served` so far; the data order and shapes come from the program bytes the challenge carried']
  }
}

export const DATASET_STORAGE: StorageSpec[] = [
  { name: 'NextDatasetChallengeId', type: 'u64', modifier: 'Default', docs: 'Id of the next dataset challenge.' },
  { name: 'DatasetChallenges', key: 'u64', hasher: 'Twox64Concat', type: 'DatasetChallenge', modifier: 'Optional', docs: 'Dataset challenges by id.' },
  { name: 'OpenDatasetChallenges', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u64>', modifier: 'Default', docs: 'Per task: its open dataset challenges.' },
  { name: 'AnsweredDatasetChallenges', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u64>', modifier: 'Default', docs: 'Per task: answered dataset challenges whose deposits are settled with the task.' },
  { name: 'DatasetChallengers', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<AccountId>', modifier: 'Default', docs: 'Per task: verifiers that challenged its dataset (one challenge each).' },
  { name: 'DatasetWithheld', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<AccountId>', modifier: 'Default', docs: 'Per task: verifiers whose dataset challenge the submitter left unanswered: their rejects stand (paid V, never lapsed) and count toward the quorum.' }
]

export const DATASET_CALLS: CallSpec[] = [
  { name: 'challenge_dataset', index: 80, args: [['task_id', 'u64'], ['program', 'Vec<u8>']], docs: 'An active assigned verifier that cannot obtain the task\'s dataset challenges the submitter to serve, on chain, the rows of every batch its required sample\'s replay reads (for each sampled unit, the steps from the latest checkpoint at or before its start to its end; a diverged proof\'s last step): a deposit = dispute_bond is reserved, and it backs the verifier\'s reject. `program`: the task\'s program bytes (sha256 = program_hash), which give the data order and the dataset\'s shapes. In the evidence window (challenge_end, or the verifier\'s backing grace), or later while its reject rests on open availability challenges of its own; not after its own accept (ChallengeAfterAccept), one per verifier and task (DatasetAlreadyChallenged), not of a synthetic dataset (DatasetGenerated). Answer window: opened_at + 1 + max(dispute_clock, challenge_window / 4).' },
  { name: 'respond_dataset', index: 81, args: [['challenge_id', 'u64'], ['part', 'Vec<u8>']], docs: 'The submitter (or anyone holding the dataset: the rows are checked, not the sender) serves the challenged rows by the deadline, in parts (CBOR, protocols/availability/dataset-serve.ts, version 1, at most 1 MiB each): rows in order (step by step, batch position by position) starting at or before the next row not yet served (rows already in count once; a part of nothing new is taken and does nothing), each row\'s leaf of the input rows\' tree and of the labels\' tree with its path, against xRoot and yRoot, nodeHash(xRoot, yRoot) = dataset_root. The serve not complete, the deadline is at least opened_at + 1 + the answer window + one block per 128 KiB of rows served (each row counted as its two leaves whole). When the last row is in, the challenge is answered (DatasetAnswered), and the verifier\'s reject is withdrawn once none of its own availability or dataset challenges is open (VerdictReopened): it votes again by the later of its deadline and this block + challenge_window.' },
  { name: 'dataset_timeout', index: 82, args: [['challenge_id', 'u64']], docs: 'Anyone, after the deadline of an unanswered dataset challenge: the deposit back; the challenger\'s reject stands (DatasetWithheld: it is paid verifier_reward and counts toward the quorum; the solver is paid if the task is verified) and its slot never lapses.' }
]

export const DATASET_EVENTS: EventSpec[] = [
  { name: 'DatasetChallenged', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['challenger', 'AccountId'], ['submitter', 'AccountId'], ['steps', 'Vec<u32>'], ['deposit', 'u128'], ['deadline', 'u32']], docs: 'The submitter must serve the rows of the batches of `steps` on chain (respond_dataset) by `deadline`.' },
  { name: 'DatasetServed', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['from', 'u32'], ['rows', 'u32'], ['total', 'u32'], ['part', 'Vec<u8>']], docs: 'A part of the serve with new rows: rows from..from+rows of total are in, each checked against dataset_root; `part` holds those rows only (a part sent with rows already in is recorded without them); with every part, the challenger rebuilds its batches (servedBatches).' },
  { name: 'DatasetAnswered', fields: [['challenge_id', 'u64'], ['task_id', 'u64']], docs: 'Every challenged row is on chain. The deposit stays reserved until the task ends (DatasetDepositSettled).' },
  { name: 'DatasetTimedOut', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['submitter', 'AccountId']], docs: 'The submitter did not serve in time: the deposit back, the challenger\'s reject stands.' },
  { name: 'DatasetDepositSettled', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['to', 'AccountId'], ['amount', 'u128']], docs: 'At the end of the task, the deposit of an answered dataset challenge: back to the verifier if a verdict of its stood (or, the task failed, its accept was not slashed), else (served, then silent) to the submitter.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const DATASET_ERRORS: ErrorSpec[] = [
  err('DatasetChallengeNotFound', 'No dataset challenge with this id.'),
  err('DatasetChallengeClosed', 'The dataset challenge was already answered or timed out.'),
  err('DatasetAlreadyChallenged', 'This verifier already challenged the task\'s dataset.'),
  err('DatasetGenerated', 'The task\'s dataset is synthetic: anyone generates it from the program.'),
  err('InvalidDatasetServe', 'The dataset serve part is malformed, not version 1, starts past the next row not yet served, or holds rows past the challenge\'s total.'),
  err('DatasetProofInvalid', 'xRoot/yRoot do not open dataset_root, or a row leaf does not verify against its tree at the row its batch position names.')
]
