import type { StorageSpec } from './spec-types.js'

// The state commitment of a task (state-commitment.ts implements it; spec.ts
// splices the list into the Arbitration pallet): whether its program commits
// chunked state roots (docs/training.md "Chunked roots: design"). No call of
// its own: respond_availability reads it to check a serve's headers and leaves.

export const STATE_COMMITMENT_STORAGE: StorageSpec[] = [
  {
    name: 'TaskStateCommitment',
    key: 'u64',
    hasher: 'Twox64Concat',
    type: 'u8',
    modifier: 'Optional',
    docs: 'Per task whose program names stateCommitment "chunked": 1. Its state roots are over chunked tensor commitments: a serve of its checkpoint carries chunked headers {dtype, shape, chunk_root} and 4 KiB chunks with their paths. Absent: row + column commitments.'
  }
]
