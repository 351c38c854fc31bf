import type { ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// Serving a challenged checkpoint through the chain, part of the Arbitration
// pallet interface (availability-serve.ts and served-grace.ts implement it;
// spec.ts appends these lists at the end of its own). No call of its own:
// respond_availability (21) takes the serve parts.

export const SERVE_TYPES: NamedTypes = {
  ServeProgress: {
    path: ['pallet_arbitration', 'types', 'ServeProgress'],
    fields: [['served', 'u32'], ['total', 'u32'], ['headers_hash', 'H256'], ['parts', 'Vec<u32>'], ['served_as', 'u64']],
    docs: ['served: leaves of the state on chain so far, of total (every row-tree leaf of every state tensor); headers_hash: sha256 of the tensor headers every part repeats; parts: the blocks that hold the parts; served_as: the challenge id their AvailabilityServed events name (another challenge of the same checkpoint when this one was answered by its serve)']
  }
}

export const SERVE_STORAGE: StorageSpec[] = [
  { name: 'AvailabilityServes', key: 'u64', hasher: 'Twox64Concat', type: 'ServeProgress', modifier: 'Optional', docs: 'Per availability challenge: how far the solver has served the checkpoint on chain (shared by every challenge of the checkpoint the serve completed).' },
  { name: 'ServedChallengers', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<AccountId>', modifier: 'Default', docs: 'Per task: assigned verifiers whose availability challenge was served: their verdict was reopened (VerdictReopened) and they may vote after challenge_end, by their deadline.' }
]

export const SERVE_EVENTS: EventSpec[] = [
  { name: 'AvailabilityServed', fields: [['challenge_id', 'u64'], ['task_id', 'u64'], ['from', 'u32'], ['leaves', 'u32'], ['total', 'u32'], ['response', 'Vec<u8>']], docs: 'A part of the serve of a challenged checkpoint (protocols/availability/serve.ts, CBOR): leaves from..from+leaves of total, each checked against the committed state root; with every part, anyone rebuilds the state (assembleServedState).' },
  { name: 'VerdictReopened', fields: [['task_id', 'u64'], ['verifier', 'AccountId'], ['deadline', 'u32']], docs: 'The assigned verifier\'s availability challenge was served: its reject is withdrawn and it is no longer backed; it votes again by `deadline` (at least the serve\'s block + challenge_window), or its slot lapses.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const SERVE_ERRORS: ErrorSpec[] = [
  err('CheckpointServed', 'This checkpoint of the task was already served on chain (AvailabilityServed): read it there.')
]
