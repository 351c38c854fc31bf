import { randomInt } from 'node:crypto'
import { bytesEqual, fromHex } from '../../protocols/commit/merkle.js'
import { CHUNK_SAMPLES, chunkLeaf, codedRoot, codingParams, findChunkRoot, validateChunkList, type CodedCheckpoint } from '../../protocols/erasure/index.js'
import { decodeChunks } from '../../protocols/erasure/coder.js'
import type { RunIndex } from '../../protocols/verification/run-index.js'
import type { ShardService } from '../shards/index.js'

// A verifier's use of erasure-coded checkpoints (docs/protocol.md §5, "Chunk
// sampling"): the run index's codings must make the coded root the solver
// committed on chain; chunks are fetched by index from any provider (the
// solver first) and each is checked against the chunk list's leaf hash; a
// checkpoint is rebuilt from any k of them.

type Entry = RunIndex['checkpoints'][number]
export interface ChunkFetchOptions { providers?: string[], findTimeoutMs?: number, requestTimeoutMs?: number, signal?: AbortSignal }

/** The run index's codings as the coded root commits them; throws unless they make `committed` (the chain's entry). */
export function checkCodedIndex (index: RunIndex, chainEntries: readonly string[]): CodedCheckpoint[] {
  const committed = findChunkRoot(chainEntries)
  if (committed === null) throw new Error('the solver committed no coded root with its proof')
  const cks = index.checkpoints.map(c => {
    if (c.coded === undefined) throw new Error(`checkpoint ${c.step} has no erasure coding in the run index`)
    return { step: c.step, dataBytes: c.coded.dataBytes, chunkRoot: fromHex(c.coded.chunkRoot) }
  })
  if (!bytesEqual(codedRoot(cks), committed)) throw new Error('the run index\'s checkpoint codings do not make the coded root committed on chain')
  return cks
}

/** The chunks at `indices` that could be fetched and are under the committed chunk root. */
export async function fetchChunks (shards: ShardService, ck: Entry, indices: readonly number[], o: ChunkFetchOptions = {}): Promise<Map<number, Uint8Array>> {
  if (ck.coded === undefined) throw new Error(`checkpoint ${ck.step} has no erasure coding`)
  const opts = {
    ...(o.providers != null ? { providers: o.providers } : {}), findTimeoutMs: o.findTimeoutMs ?? 15_000,
    requestTimeoutMs: o.requestTimeoutMs ?? 15_000, provide: false, ...(o.signal != null ? { signal: o.signal } : {})
  }
  const { leaves } = validateChunkList(
    JSON.parse(new TextDecoder().decode(await shards.fetchBytes(ck.coded.list, opts))),
    { step: ck.step, dataBytes: ck.coded.dataBytes, chunkRoot: fromHex(ck.coded.chunkRoot) }
  )
  const got = await shards.fetchBlocksOf(ck.coded.chunks, indices, opts)
  const out = new Map<number, Uint8Array>()
  for (const [i, b] of got) if (bytesEqual(chunkLeaf(b), leaves[i])) out.set(i, b)
  return out
}

/** Samples CHUNK_SAMPLES random chunks of a checkpoint from providers; returns the indices that could not be fetched. */
export async function sampleFromProviders (shards: ShardService, ck: Entry, o: ChunkFetchOptions = {}): Promise<number[]> {
  const { total } = codingParams(ck.coded!.dataBytes)
  const all = Array.from({ length: total }, (_, i) => i)
  for (let i = 0; i < Math.min(CHUNK_SAMPLES, total); i++) { const j = i + randomInt(total - i); [all[i], all[j]] = [all[j], all[i]] }
  const want = all.slice(0, Math.min(CHUNK_SAMPLES, total))
  const got = await fetchChunks(shards, ck, want, o)
  return want.filter(i => !got.has(i))
}

/** The checkpoint's state.bin rebuilt from any k of its chunks (data chunks first: a copy). Throws with the count when fewer come. */
export async function rebuildFromChunks (shards: ShardService, ck: Entry, o: ChunkFetchOptions = {}): Promise<Uint8Array> {
  const { total, dataShards } = codingParams(ck.coded!.dataBytes)
  const got = await fetchChunks(shards, ck, Array.from({ length: dataShards }, (_, i) => i), o)
  if (got.size < dataShards) {
    for (const [i, b] of await fetchChunks(shards, ck, Array.from({ length: total - dataShards }, (_, i) => dataShards + i), o)) got.set(i, b)
  }
  if (got.size < dataShards) throw new Error(`only ${got.size} of the ${dataShards} chunks needed to rebuild checkpoint ${ck.step} could be fetched`)
  return decodeChunks(ck.coded!.dataBytes, Array.from({ length: total }, (_, i) => got.get(i)))
}
