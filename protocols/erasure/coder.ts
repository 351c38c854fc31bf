import { encode as rsEncode, reconstruct as rsReconstruct } from 'wasm-reed-solomon-erasure'
import { codingParams, type CodingParams } from './params.js'

// Reed–Solomon coding of a checkpoint with wasm-reed-solomon-erasure (the
// reed-solomon-erasure Rust crate, GF(2^8), Backblaze's systematic Vandermonde
// code, compiled to WebAssembly; docs/shards.md says why this library). The
// code is systematic and linear: the first k chunks are the checkpoint itself
// (zero-padded), and the parity is a fixed function of them, so every honest
// encoder produces the same chunks and the same chunk root.

/** The n = 2k chunks of a checkpoint (each `chunkBytes` long). */
export function encodeChunks (data: Uint8Array): { params: CodingParams, chunks: Uint8Array[] } {
  const params = codingParams(data.length)
  const { dataShards: k, parityShards: m, chunkBytes: L } = params
  const shards: Uint8Array[] = []
  for (let i = 0; i < k; i++) {
    const s = new Uint8Array(L)
    s.set(data.subarray(i * L, Math.min((i + 1) * L, data.length)))
    shards.push(s)
  }
  const all = rsEncode(shards, m)
  if (all.length !== k + m || !all.every(s => s.length === L)) throw new Error('the Reed–Solomon encoder returned an unexpected shard layout')
  return { params, chunks: all }
}

/**
 * The checkpoint from any k of its chunks (`chunks[i]` is chunk i, or
 * undefined when missing). Chunks are taken as given: the caller checks each
 * against the chunk root first. Throws when fewer than k are present.
 */
export function decodeChunks (dataBytes: number, chunks: ReadonlyArray<Uint8Array | undefined>): Uint8Array {
  const { dataShards: k, parityShards: m, total, chunkBytes: L } = codingParams(dataBytes)
  if (chunks.length !== total) throw new Error(`expected a slot for each of the ${total} chunks, got ${chunks.length}`)
  const present = chunks.map(c => c !== undefined && c.length === L)
  const have = present.filter(Boolean).length
  if (have < k) throw new Error(`${have} of ${total} chunks: at least ${k} are needed to rebuild the checkpoint`)
  let data: Uint8Array[]
  if (present.slice(0, k).every(Boolean)) {
    data = chunks.slice(0, k) as Uint8Array[]
  } else {
    const dead: number[] = []
    const shards = chunks.map((c, i) => {
      if (present[i]) return c!
      dead.push(i)
      return new Uint8Array(L)
    })
    data = rsReconstruct(shards, m, Uint32Array.from(dead)).slice(0, k)
  }
  const out = new Uint8Array(dataBytes)
  for (let i = 0; i < k; i++) {
    const off = i * L
    if (off >= dataBytes) break
    out.set(data[i].subarray(0, Math.min(L, dataBytes - off)), off)
  }
  return out
}
