import type { CallSpec, ErrorSpec, EventSpec, StorageSpec } from './spec-types.js'
import type { NamedTypes } from './types.js'

// Chunk sampling of erasure-coded checkpoints, part of the Arbitration pallet
// interface (devnet/chain/runtime/chunk-sampling.ts implements it; spec.ts
// splices these lists in). Call indices 50–59.

export const CHUNK_TYPES: NamedTypes = {
  ChunkRequestStatus: { path: ['pallet_arbitration', 'types', 'ChunkRequestStatus'], variants: [{ name: 'Open' }, { name: 'Answered' }, { name: 'TimedOut' }] },
  ChunkRequest: {
    path: ['pallet_arbitration', 'types', 'ChunkRequest'],
    fields: [
      ['task_id', 'u64'], ['requester', 'AccountId'], ['solver', 'AccountId'], ['checkpoint_step', 'u32'], ['deposit', 'u128'],
      ['opened_at', 'u32'], ['deadline', 'u32'], ['samples', 'u32'], ['posted', 'u64'], ['status', 'ChunkRequestStatus']
    ],
    docs: ['samples: chunks drawn (0 until the first part is posted: it follows from the committed data_bytes); posted: bit k set once sample k is on chain']
  }
}

export const CHUNK_STORAGE: StorageSpec[] = [
  { name: 'NextChunkRequestId', type: 'u64', modifier: 'Default', docs: 'Id of the next chunk-sample request.' },
  { name: 'ChunkRequests', key: 'u64', hasher: 'Twox64Concat', type: 'ChunkRequest', modifier: 'Optional', docs: 'Chunk-sample requests by id.' },
  { name: 'OpenChunkRequests', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<(u32, u64)>', modifier: 'Default', docs: 'Per task: (checkpoint step, request id) of every open chunk-sample request.' },
  { name: 'AnsweredChunkRequests', key: 'u64', hasher: 'Twox64Concat', type: 'Vec<u64>', modifier: 'Default', docs: 'Per task: answered chunk-sample requests whose deposits are settled with the task.' }
]

export const CHUNK_CALLS: CallSpec[] = [
  { name: 'sample_chunks', index: 50, args: [['task_id', 'u64'], ['checkpoint_step', 'u32']], docs: 'Anyone registered but the solver, in the challenge window: asks for samples of the erasure-coded chunks of checkpoint_step (a deposit = dispute_bond is reserved). The chunks are CHUNK_SAMPLES distinct indices (all of them for a checkpoint of fewer chunks) drawn from chunkSampleSeed(hash of the block including this call, request id) (protocols/erasure): the caller cannot pick them.' },
  { name: 'respond_chunks', index: 51, args: [['request_id', 'u64'], ['response', 'Vec<u8>']], docs: 'The solver posts drawn chunks (CBOR, protocols/erasure/response.ts, at most 1 MiB per call; several calls may share the samples): the checkpoint\'s (step, data_bytes, chunk_root) with its path to the coded root committed in commit_proof (the entry "chunk-root:<hex>"), each chunk with its path to chunk_root. From the block after the request until its deadline.' },
  { name: 'chunks_timeout', index: 52, args: [['request_id', 'u64']], docs: 'Anyone, after the deadline of a request not fully answered: the solver is slashed slash_ppm (winner_share_ppm of it to the requester), the requester\'s deposit is returned and the task fails.' }
]

export const CHUNK_EVENTS: EventSpec[] = [
  { name: 'ChunksRequested', fields: [['request_id', 'u64'], ['task_id', 'u64'], ['requester', 'AccountId'], ['solver', 'AccountId'], ['checkpoint_step', 'u32'], ['deposit', 'u128'], ['deadline', 'u32']], docs: 'Sample seed: protocols/erasure chunkSampleSeed(hash of this block, request_id).' },
  { name: 'ChunksPosted', fields: [['request_id', 'u64'], ['task_id', 'u64'], ['posted', 'u32'], ['response', 'Vec<u8>']], docs: 'A part of the answer: the chunks in full, for anyone (a provider of last resort).' },
  { name: 'ChunksAnswered', fields: [['request_id', 'u64'], ['task_id', 'u64'], ['solver', 'AccountId']], docs: 'Every drawn chunk is on chain; the deposit stays reserved until the task ends (ChunkDepositSettled).' },
  { name: 'ChunksTimedOut', fields: [['request_id', 'u64'], ['task_id', 'u64'], ['solver', 'AccountId'], ['slashed', 'u128']], docs: 'The solver did not post every drawn chunk in time: slashed, the task fails.' },
  { name: 'ChunkDepositSettled', fields: [['request_id', 'u64'], ['task_id', 'u64'], ['to', 'AccountId'], ['amount', 'u128']], docs: 'At the end of the task, the deposit of an answered request: to the solver if the task was verified anyway, back to the requester if not.' }
]

const err = (name: string, docs: string): ErrorSpec => ({ name, docs })
export const CHUNK_ERRORS: ErrorSpec[] = [
  err('ChunkRequestOpen', 'A chunk-sample request of this checkpoint is already open.'),
  err('ChunkRequestNotFound', 'No chunk-sample request with this id.'),
  err('ChunkRequestClosed', 'The chunk-sample request was already answered or timed out.'),
  err('ChunkResponseTooLarge', 'A chunk response part exceeds 1 MiB.'),
  err('InvalidChunkResponse', 'The chunk response is malformed, of another step, or posts chunks other than the drawn ones not yet posted.'),
  err('ChunkProofInvalid', 'A path in the chunk response does not verify: the checkpoint against the committed coded root, or a chunk against the chunk root.')
]
