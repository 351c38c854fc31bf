import { encode } from 'cborg'
import { merkleProof, merkleRoot, sha256, toHex } from '../commit/merkle.js'
import type { DType } from '../commit/tensor.js'

// Op tape of one training step (version 1): every kernel call in execution
// order. Inputs reference where their value came from — a state tensor (index
// into the state of the step's start), the batch data, an earlier op's output,
// or a constant — so a bisection can check an op's inputs against agreed
// values. A final pseudo-entry '@state' lists which op output became which
// state tensor (Variable.assign is not a kernel).
//
// entryHash = sha256(cbor(entry)) with cborg's deterministic encoding (sorted
// map keys, shortest exact float); tapeRoot = merkleRoot(entryHashes).
// The skeleton of an entry drops commitments and constant values; it is the
// same for every step of a program, so skeletonRoot can be committed once.

export const TAPE_VERSION = 1
export const STATE_PSEUDO_KERNEL = '@state'

export type InputRef =
  | { kind: 'state', index: number }
  | { kind: 'data', name: 'x' | 'y' }
  | { kind: 'op', index: number, output: number }
  | { kind: 'const' }

export interface TapeInput { name: string, ref: InputRef, dtype: DType, shape: number[], commitment: string, value?: number[] }
export interface TapeOutput { dtype: DType, shape: number[], commitment: string }
export interface TapeEntry { index: number, kernel: string, attrs: Record<string, unknown>, inputs: TapeInput[], outputs: TapeOutput[] }

/**
 * Bounds on one encoded tape entry that a claim can carry (the chain decodes
 * it): the @state entry has one input per state tensor, so a program whose
 * state does not fit is not admissible (protocols/program/admissible.ts).
 */
export const MAX_ENTRY_INPUTS = 1024
export const MAX_ENTRY_BYTES = 32768

/** Constants with at most this many elements carry their values in the entry. */
export const MAX_INLINE_CONST = 64

/** JSON-safe, canonical attrs: undefined dropped, typed arrays → arrays; non-finite numbers rejected. */
export function canonicalAttrs (attrs: Record<string, unknown> | undefined): Record<string, unknown> {
  const conv = (v: unknown, path: string): unknown => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError(`attr ${path}: non-finite number ${v}`)
      return Object.is(v, -0) ? 0 : v
    }
    if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>).map((x, i) => conv(x, `${path}[${i}]`))
    if (Array.isArray(v)) return v.map((x, i) => conv(x, `${path}[${i}]`))
    if (typeof v === 'object') {
      const out: Record<string, unknown> = {}
      for (const k of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[k]
        if (x !== undefined) out[k] = conv(x, `${path}.${k}`)
      }
      return out
    }
    throw new TypeError(`attr ${path}: cannot encode a ${typeof v}`)
  }
  return conv(attrs ?? {}, 'attrs') as Record<string, unknown>
}

export function encodeEntry (e: TapeEntry | SkeletonEntry): Uint8Array {
  return encode(e)
}

export function entryHash (e: TapeEntry): Uint8Array {
  return sha256(encodeEntry(e))
}

export type SkeletonEntry = Omit<TapeEntry, 'inputs' | 'outputs'> & {
  inputs: Array<Omit<TapeInput, 'commitment' | 'value'>>
  outputs: Array<Omit<TapeOutput, 'commitment'>>
}

export function skeletonOf (e: TapeEntry): SkeletonEntry {
  return {
    index: e.index,
    kernel: e.kernel,
    attrs: e.attrs,
    inputs: e.inputs.map(i => ({ name: i.name, ref: i.ref, dtype: i.dtype, shape: i.shape })),
    outputs: e.outputs.map(o => ({ dtype: o.dtype, shape: o.shape }))
  }
}

export function tapeRoot (entries: readonly TapeEntry[]): string {
  return toHex(merkleRoot(entries.map(entryHash)))
}

export function skeletonRoot (entries: readonly TapeEntry[]): string {
  return toHex(merkleRoot(entries.map(e => sha256(encodeEntry(skeletonOf(e))))))
}

export function proveEntry (entries: readonly TapeEntry[], index: number): string[] {
  return merkleProof(entries.map(entryHash), index).map(toHex)
}

/** Structural checks of a tape (refs point backwards, indexes in order). */
export function validateTape (entries: readonly TapeEntry[], stateSize: number): void {
  entries.forEach((e, i) => {
    if (e.index !== i) throw new Error(`tape entry ${i} has index ${e.index}`)
    if (typeof e.kernel !== 'string' || e.kernel.length === 0) throw new Error(`tape entry ${i}: no kernel`)
    for (const inp of e.inputs) {
      const r = inp.ref
      if (r.kind === 'state' && !(Number.isInteger(r.index) && r.index >= 0 && r.index < stateSize)) throw new Error(`tape entry ${i}: state ref ${r.index} out of range`)
      if (r.kind === 'op' && !(Number.isInteger(r.index) && r.index >= 0 && r.index < i && r.output >= 0 && r.output < entries[r.index].outputs.length)) throw new Error(`tape entry ${i}: op ref must point to an earlier op's output`)
      if (r.kind === 'op') {
        const src = entries[r.index].outputs[r.output]
        if (src.commitment !== inp.commitment || src.dtype !== inp.dtype) throw new Error(`tape entry ${i}: input ${inp.name} does not match output ${r.output} of op ${r.index}`)
      }
    }
  })
}
