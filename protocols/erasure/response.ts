import { decode, encode } from 'cborg'
import { sha256 } from '../commit/merkle.js'
import { checkpointOnPath, chunkLeaf, chunkOnPath, chunkPath, codedPath, type CodedCheckpoint } from './commitment.js'
import { checkpointPosition, codingParams, samplesFor } from './params.js'

// Chunk sampling through the chain (docs/protocol.md, "Chunk sampling").
// Anyone but the solver asks the chain for samples of a checkpoint's chunks
// (sample_chunks); the hash of the block including that call seeds
// samplesFor(n) DISTINCT chunk indices, which nobody could know when the call
// was sent; the solver posts those chunks with their paths to the chunk root
// and the checkpoint's path to the coded root it committed, in one or more
// parts of at most MAX_CHUNK_RESPONSE_BYTES. Pure: the chain runtime and the
// solver's node share this code.

export const CHUNK_RESPONSE_VERSION = 1
/** The chain refuses a larger part (the chunks go on chain, in an event). */
export const MAX_CHUNK_RESPONSE_BYTES = 1024 * 1024
const MAX_DEPTH = 32

const te = new TextEncoder()
function u64le (n: number | bigint): Uint8Array {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true)
  return b
}

export function chunkSampleSeed (blockHash: Uint8Array, requestId: number | bigint): Uint8Array {
  return sha256(te.encode('proofswarm/chunk-sample/v1'), blockHash, u64le(requestId))
}

/** `count` distinct chunk indices out of `total`, uniform (partial Fisher–Yates keyed by the seed; bias ≤ 2^-56). */
export function sampleChunkIndices (seed: Uint8Array, total: number, count: number): number[] {
  if (!Number.isInteger(total) || total < 1 || total > 1 << 16) throw new RangeError(`cannot sample out of ${total} chunks`)
  const c = Math.min(count, total)
  const idx = Array.from({ length: total }, (_, i) => i)
  for (let i = 0; i < c; i++) {
    const h = sha256(seed, u64le(i))
    const r = i + Number(new DataView(h.buffer, h.byteOffset, 8).getBigUint64(0, true) % BigInt(total - i))
    const t = idx[i]; idx[i] = idx[r]; idx[r] = t
  }
  return idx.slice(0, c)
}

export interface PostedChunk {
  /** sample number (position in the drawn list) */
  k: number
  bytes: Uint8Array
  /** path of the chunk's leaf to the chunk root */
  path: Uint8Array[]
}
export interface ChunkResponse {
  v: 1
  step: number
  dataBytes: number
  chunkRoot: Uint8Array
  /** path of the checkpoint's leaf to the coded root */
  path: Uint8Array[]
  chunks: PostedChunk[]
}

export type ChunkResponseError = 'ChunkResponseTooLarge' | 'InvalidChunkResponse' | 'ChunkProofInvalid'
export class ChunkResponseRejected extends Error {
  constructor (readonly reason: ChunkResponseError, detail: string) { super(`${reason}: ${detail}`); this.name = 'ChunkResponseRejected' }
}
const reject = (reason: ChunkResponseError, detail: string): never => { throw new ChunkResponseRejected(reason, detail) }

/** What the solver holds for one run: every checkpoint's coding and the chunks of the sampled one. */
export interface ChunkSource {
  checkpoints: readonly CodedCheckpoint[]
  /** index of the sampled checkpoint in `checkpoints` */
  index: number
  /** all n chunks of that checkpoint */
  chunks: readonly Uint8Array[]
}

/**
 * The response parts for the drawn samples (those not yet in `posted`), each
 * at most `maxBytes`. Throws when a chunk does not hash into the committed
 * chunk root (a solver without the true chunks cannot answer).
 */
export function buildChunkResponses (src: ChunkSource, seed: Uint8Array, posted = 0n, maxBytes = MAX_CHUNK_RESPONSE_BYTES): Uint8Array[] {
  const c = src.checkpoints[src.index]
  const { total, chunkBytes } = codingParams(c.dataBytes)
  if (src.chunks.length !== total) throw new Error(`expected ${total} chunks, have ${src.chunks.length}`)
  const leaves = src.chunks.map(chunkLeaf)
  const drawn = sampleChunkIndices(seed, total, samplesFor(total))
  const path = codedPath(src.checkpoints, src.index)
  const head = { v: CHUNK_RESPONSE_VERSION, step: c.step, dataBytes: c.dataBytes, chunkRoot: c.chunkRoot, path }
  const perChunk = chunkBytes + 40 * (Math.ceil(Math.log2(total)) + 1) + 16
  const overhead = encode({ ...head, chunks: [] }).length + 16
  const perPart = Math.max(1, Math.floor((maxBytes - overhead) / perChunk))
  const todo = drawn.map((index, k) => ({ k, index })).filter(x => (posted >> BigInt(x.k) & 1n) === 0n)
  const parts: Uint8Array[] = []
  for (let i = 0; i < todo.length; i += perPart) {
    const chunks = todo.slice(i, i + perPart).map(({ k, index }) => {
      const p = chunkPath(leaves, index)
      if (!chunkOnPath(c.chunkRoot, total, index, src.chunks[index], p)) throw new Error(`chunk ${index} is not under the committed chunk root of step ${c.step}`)
      return { k, bytes: src.chunks[index], path: p }
    })
    parts.push(encode({ ...head, chunks }))
  }
  return parts
}

export interface ChunkCheckContext {
  /** the coded root the solver committed */
  codedRoot: Uint8Array
  /** the sampled checkpoint step */
  step: number
  stepCount: number
  checkpointEvery: number
  seed: Uint8Array
  /** bit k set: sample k was already posted */
  posted: bigint
}

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > MAX_DEPTH || !v.every(is32)) reject('InvalidChunkResponse', `${what} must be a list of 32-byte hashes`)
  return v as Uint8Array[]
}

/**
 * The chain's rule for one response part: the checkpoint is the committed one
 * of the sampled step, every chunk is a drawn sample not posted before and
 * verifies under the chunk root. Returns the sample numbers it posts and how
 * many samples the request has in all.
 */
export function checkChunkResponse (ctx: ChunkCheckContext, bytes: Uint8Array): { posted: number[], samples: number, response: ChunkResponse } {
  if (bytes.length > MAX_CHUNK_RESPONSE_BYTES) reject('ChunkResponseTooLarge', `${bytes.length} bytes exceed ${MAX_CHUNK_RESPONSE_BYTES}`)
  let r: ChunkResponse
  try { r = decode(bytes) as ChunkResponse } catch (e) { return reject('InvalidChunkResponse', `not CBOR: ${(e as Error).message}`) }
  if (typeof r !== 'object' || r === null || r.v !== CHUNK_RESPONSE_VERSION) reject('InvalidChunkResponse', 'not a version 1 chunk response')
  if (r.step !== ctx.step) reject('InvalidChunkResponse', `the response is for step ${String(r.step)}, the request for ${ctx.step}`)
  if (!Number.isSafeInteger(r.dataBytes) || !is32(r.chunkRoot)) reject('InvalidChunkResponse', 'malformed checkpoint header')
  let total = 0
  let chunkBytes = 0
  try { ({ total, chunkBytes } = codingParams(r.dataBytes)) } catch (e) { reject('InvalidChunkResponse', (e as Error).message) }
  if (checkpointPosition(ctx.step, ctx.stepCount, ctx.checkpointEvery) === null) reject('InvalidChunkResponse', `step ${ctx.step} is not a checkpoint step`)
  const coded: CodedCheckpoint = { step: r.step, dataBytes: r.dataBytes, chunkRoot: r.chunkRoot }
  if (!checkpointOnPath(ctx.codedRoot, coded, hashes(r.path, 'path'), ctx.stepCount, ctx.checkpointEvery)) reject('ChunkProofInvalid', `the checkpoint header is not leaf ${ctx.step} of the committed coded root`)
  const samples = samplesFor(total)
  const drawn = sampleChunkIndices(ctx.seed, total, samples)
  if (!Array.isArray(r.chunks) || r.chunks.length < 1 || r.chunks.length > samples) reject('InvalidChunkResponse', `1 to ${samples} chunks per part`)
  const seen = new Set<number>()
  for (const c of r.chunks) {
    if (typeof c !== 'object' || c === null || !Number.isInteger(c.k) || c.k < 0 || c.k >= samples || !(c.bytes instanceof Uint8Array)) reject('InvalidChunkResponse', 'malformed chunk entry')
    if (seen.has(c.k) || (ctx.posted >> BigInt(c.k) & 1n) === 1n) reject('InvalidChunkResponse', `sample ${c.k} posted twice`)
    seen.add(c.k)
    if (c.bytes.length !== chunkBytes) reject('InvalidChunkResponse', `sample ${c.k}: a chunk has ${chunkBytes} bytes`)
    if (!chunkOnPath(r.chunkRoot, total, drawn[c.k], c.bytes, hashes(c.path, `sample ${c.k} path`))) reject('ChunkProofInvalid', `sample ${c.k}: chunk ${drawn[c.k]} does not verify against the chunk root`)
  }
  return { posted: [...seen], samples, response: r }
}
