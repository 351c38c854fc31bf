import { combineChunked, type ChunkProof } from '../commit/chunked.js'
import { bytesEqual, rootFromProof, sha256 } from '../commit/merkle.js'
import { combineRoots, matrixView, type DType, type SliceProof, type TypedValues } from '../commit/tensor.js'
import type { ChunkedHead, ClaimChunk, ClaimSlice, TensorHead } from './claim-parts.js'
import { reject } from './ruling.js'

// Reading a claim's fields: a claim comes from anyone, so every field is
// checked for type and bound before it is used (else InvalidClaim).

const is32 = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32
export function hashes (v: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(v) || v.length > 64 || !v.every(is32)) reject('InvalidClaim', `${what} must be a list of 32-byte hashes`)
  return v
}
export function h32 (v: unknown, what: string): Uint8Array { if (!is32(v)) reject('InvalidClaim', `${what} must be 32 bytes`); return v }
export function int (v: unknown, what: string): number { if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) reject('InvalidClaim', `${what} must be a non-negative integer`); return v }

/** Checks a Merkle path of exactly `depth` siblings. */
export function onPath (root: Uint8Array, leaf: Uint8Array, index: number, path: Uint8Array[], depth?: number): boolean {
  if (depth !== undefined && path.length !== depth) return false
  if (index >= 2 ** path.length) return false
  return bytesEqual(rootFromProof(leaf, index, path), root)
}

function shapeOf (v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.length > 8 || !v.every(d => Number.isInteger(d) && d >= 0 && d <= 1 << 24)) reject('InvalidClaim', `${what}: bad shape`)
  return v
}

export function slice (p: unknown, what: string): SliceProof {
  const s = p as ClaimSlice
  if (typeof s !== 'object' || s === null || !['float32', 'int32', 'bool'].includes(s.dtype) || (s.axis !== 'row' && s.axis !== 'col')) reject('InvalidClaim', `${what}: malformed slice`)
  shapeOf(s.shape, what)
  if (!(s.bytes instanceof Uint8Array) || s.bytes.length > 1 << 20) reject('InvalidClaim', `${what}: bad bytes`)
  return { dtype: s.dtype, shape: s.shape, axis: s.axis, index: int(s.index, `${what}.index`), bytes: s.bytes, siblings: hashes(s.siblings, `${what}.siblings`), otherRoot: h32(s.otherRoot, `${what}.otherRoot`) }
}

export function chunk (p: unknown, what: string): ChunkProof {
  const s = p as ClaimChunk
  if (typeof s !== 'object' || s === null || !['float32', 'int32', 'bool'].includes(s.dtype)) reject('InvalidClaim', `${what}: malformed chunk`)
  shapeOf(s.shape, what)
  if (!(s.bytes instanceof Uint8Array) || s.bytes.length > 1 << 16) reject('InvalidClaim', `${what}: bad bytes`)
  return { dtype: s.dtype, shape: s.shape, index: int(s.index, `${what}.index`), bytes: s.bytes, siblings: hashes(s.siblings, `${what}.siblings`) }
}

/** A tensor commitment recomputed from its preimage: a row + column head, or a chunked one (`chunkRoot`). */
export function tensorOf (v: unknown): Uint8Array {
  const t = v as TensorHead | ChunkedHead
  if (typeof t !== 'object' || t === null || !['float32', 'int32', 'bool'].includes(t.dtype)) reject('InvalidClaim', 'tensor: malformed head')
  if ('chunkRoot' in t) return combineChunked(t.dtype, shapeOf(t.shape, 'tensor'), h32(t.chunkRoot, 'tensor.chunkRoot'))
  return combineRoots(t.dtype, shapeOf(t.shape, 'tensor'), h32(t.rowRoot, 'tensor.rowRoot'), h32(t.colRoot, 'tensor.colRoot'))
}

export function sameShape (a: readonly number[], b: readonly number[]): boolean { return a.length === b.length && a.every((x, i) => x === b[i]) }

/** Bits of element `pos` of a slice (float32 bit pattern, int32 as uint32, bool byte: the committed bytes). */
export function bitsAt (dtype: DType, values: TypedValues, pos: number): number {
  if (dtype === 'float32') return new Uint32Array(values.buffer, values.byteOffset, values.length)[pos]
  if (dtype === 'int32') return (values[pos] | 0) >>> 0
  return values[pos] & 0xff
}
/** Bits of a number in `dtype`. A NaN number has no defined bits (engines may canonicalise): references give bits. */
export function valueBits (dtype: DType, v: number): number {
  if (dtype === 'float32') return new Uint32Array(new Float32Array([v]).buffer)[0]
  if (dtype === 'int32') return (v | 0) >>> 0
  return v & 0xff
}

/** Position of flat element `flat` inside a row or column slice, or undefined if the slice does not hold it. */
export function posInSlice (shape: readonly number[], axis: 'row' | 'col', index: number, flat: number): number | undefined {
  const { cols } = matrixView(shape)
  const r = Math.floor(flat / cols); const c = flat % cols
  if (axis === 'row') return r === index ? c : undefined
  return c === index ? r : undefined
}

interface ProgramFacts { runtime: string, seed: number, batchSize: number, trainSize: number, rowSize: number, classes: number }
export function programFacts (bytes: unknown, programHash: Uint8Array): ProgramFacts {
  if (!(bytes instanceof Uint8Array) || bytes.length > 16384) reject('InvalidClaim', 'program must be at most 16 KiB of bytes')
  if (!bytesEqual(sha256(bytes), programHash)) reject('InvalidProof', 'program bytes do not hash to the task\'s program_hash')
  let p: { runtime?: unknown, seed?: unknown, batchSize?: unknown, dataset?: { trainSize?: unknown, rowSize?: unknown, classes?: unknown } }
  try { p = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) } catch { reject('InvalidClaim', 'program is not UTF-8 JSON') }
  const n = (v: unknown, what: string): number => { if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) reject('InvalidClaim', `program.${what}`); return v }
  if (typeof p.runtime !== 'string') reject('InvalidClaim', 'program.runtime')
  return { runtime: p.runtime, seed: n(p.seed, 'seed'), batchSize: n(p.batchSize, 'batchSize'), trainSize: n(p.dataset?.trainSize, 'trainSize'), rowSize: n(p.dataset?.rowSize, 'rowSize'), classes: n(p.dataset?.classes, 'classes') }
}
