import { describe, expect, it } from 'vitest'
import { CHUNK_BYTES, commitChunked, elementChunk, proveChunk, proveElementChunk, type ChunkProof } from '../../protocols/commit/chunked.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { combineRoots, commitTensor, matrixView, proveSlice, sizeOf, type DType, type SliceProof, type TensorData } from '../../protocols/commit/tensor.js'
import { judgeConversionElement } from '../../protocols/dispute/judge-state-io.js'
import { ClaimRejected } from '../../protocols/dispute/ruling.js'
import { STATE_READ_KERNEL, STATE_WRITE_KERNEL, stateReadEntry, stateWriteEntry } from '../../protocols/tape/state-io.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'

// The element claim of a state conversion under chunked state roots
// (@StateRead: state tensor under its chunked commitment in, the same tensor
// under its row + column commitment out; @StateWrite the other way round).
// Who gains by breaking it: a defender whose row + column commitment of a state
// tensor is not its committed state (one weight changed as it is read, or
// only its column tree made from other values, so that MatMuls reading columns
// see another tensor), or whose chunked post-state is not what its ops
// computed; and a challenger who wants an honest defender to lose. The first
// must lose to the pair of openings naming the element; the second must never
// win, whatever element, axis or forged opening it brings.

function rand (seed: number): () => number {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

function tensor (shape: number[], dtype: DType = 'float32', seed = 1): TensorData {
  const r = rand(seed)
  const n = sizeOf(shape)
  const values = dtype === 'float32'
    ? Float32Array.from({ length: n }, () => r() * 2 - 1)
    : dtype === 'int32' ? Int32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32) | 0) : Uint8Array.from({ length: n }, () => (r() < 0.5 ? 0 : 1))
  return { shape, dtype, values }
}

/** `t` with element `flat`'s lowest bit flipped (a float32 one ulp away, an int32 off by one, a bool 0 ↔ 1). */
function flipped (t: TensorData, flat: number): TensorData {
  const v = t.values.slice()
  const u = t.dtype === 'bool' ? v as Uint8Array : new Uint32Array(v.buffer)
  u[flat] ^= 1
  return { ...t, values: v }
}

const hex = (b: Uint8Array): string => toHex(b)
const readOf = (t: TensorData, fine: string, chunked = hex(commitChunked(t).root)): TapeEntry => stateReadEntry(3, 2, t.dtype, t.shape, chunked, fine)
const writeOf = (t: TensorData, chunked: string, fine = hex(commitTensor(t).root)): TapeEntry => stateWriteEntry(40, { kind: 'op', index: 37, output: 0 }, t.dtype, t.shape, fine, chunked)

function sliceOf (t: TensorData, axis: 'row' | 'col', flat: number): SliceProof {
  const { cols } = matrixView(t.shape)
  return proveSlice(t, axis, axis === 'row' ? Math.floor(flat / cols) : flat % cols)
}
const claim = (flat: number, chunk: ChunkProof, slice: SliceProof): unknown => ({ flat, chunk, slice })

function winner (e: TapeEntry, c: unknown): 'challenger' | 'defender' | 'rejected' {
  try {
    return judgeConversionElement(e, c).winner
  } catch (x) {
    if (x instanceof ClaimRejected) return 'rejected'
    throw x
  }
}

// float32 [40, 300]: 12 chunks, the last of 2944 bytes; rows of 1200 bytes (one per leaf), columns of 160 (12 per leaf)
const W = tensor([40, 300], 'float32', 1)
// elements in the first chunk, on both sides of a chunk boundary, in the last partial chunk, the last element
const SPOTS = [0, 1023, 1024, 5000, 11264, 11999]

describe('@StateRead: a row + column commitment that is not the state', () => {
  it('one element changed as it is read loses, claimed by its row or by its column', () => {
    for (const f of SPOTS) {
      const lie = flipped(W, f)
      const e = readOf(W, hex(commitTensor(lie).root))
      for (const axis of ['row', 'col'] as const) {
        // the chunk from the challenger's copy of the agreed state, the leaf the defender revealed
        expect(winner(e, claim(f, proveElementChunk(W, f), sliceOf(lie, axis, f))), `element ${f} by ${axis}`).toBe('challenger')
      }
    }
  })

  it('a column tree of other values under honest rows loses to a column claim (its rows hold up)', () => {
    const f = 5000
    const lie = flipped(W, f)
    const honestRows = commitTensor(W)
    const fine = combineRoots(W.dtype, W.shape, honestRows.rowRoot, commitTensor(lie).colRoot)
    const e = readOf(W, hex(fine))
    const col = { ...sliceOf(lie, 'col', f), otherRoot: honestRows.rowRoot }
    const row = { ...sliceOf(W, 'row', f), otherRoot: commitTensor(lie).colRoot }
    expect(winner(e, claim(f, proveElementChunk(W, f), col))).toBe('challenger')
    // the rows are the state's: a row claim is a fact that holds
    expect(winner(e, claim(f, proveElementChunk(W, f), row))).toBe('defender')
  })

  it('a NaN or −0 written for a value, or another NaN payload, loses (bits, not values)', () => {
    const f = 7
    for (const bits of [0x7fc00000, 0xffc00000, 0x7fc00001, 0x80000000]) {
      const base = { ...W, values: Float32Array.from(W.values as Float32Array) }
      new Uint32Array(base.values.buffer)[f] = 0x7fc00000 // the state holds one NaN pattern
      const lie = { ...base, values: Float32Array.from(base.values as Float32Array) }
      new Uint32Array(lie.values.buffer)[f] = bits
      const want = bits === 0x7fc00000 ? 'defender' : 'challenger'
      expect(winner(readOf(base, hex(commitTensor(lie).root)), claim(f, proveElementChunk(base, f), sliceOf(lie, 'row', f))), `0x${bits.toString(16)}`).toBe(want)
    }
  })

  it('int32 and bool state tensors, across their chunk boundaries', () => {
    for (const [t, spots] of [[tensor([33, 65], 'int32', 4), [0, 1023, 1024, 2144]], [tensor([3, 5000], 'bool', 5), [4095, 4096, 8191, 8192, 14999]]] as const) {
      for (const f of spots) {
        const lie = flipped(t, f)
        for (const axis of ['row', 'col'] as const) {
          expect(winner(readOf(t, hex(commitTensor(lie).root)), claim(f, proveElementChunk(t, f), sliceOf(lie, axis, f))), `${t.dtype} ${f} ${axis}`).toBe('challenger')
        }
      }
    }
  })
})

describe('@StateWrite: a chunked post-state that is not what the ops computed', () => {
  it('one element changed in a chunk loses, the last partial chunk included', () => {
    for (const f of SPOTS) {
      const lie = flipped(W, f)
      const e = writeOf(W, hex(commitChunked(lie).root))
      for (const axis of ['row', 'col'] as const) {
        // the chunk the defender revealed, the leaf from the challenger's copy of the op output
        expect(winner(e, claim(f, proveElementChunk(lie, f), sliceOf(W, axis, f))), `element ${f} by ${axis}`).toBe('challenger')
      }
    }
  })
})

describe('an honest conversion never loses', () => {
  it('to any element by any axis: every element of tensors of each dtype (every third of the bool one), both kernels', () => {
    for (const t of [tensor([37, 113], 'float32', 6), tensor([2, 2100], 'float32', 7), tensor([33, 65], 'int32', 8), tensor([3, 3000], 'bool', 9), tensor([], 'float32', 10), tensor([1, 1], 'float32', 11)]) {
      const fine = hex(commitTensor(t).root); const chunked = hex(commitChunked(t).root)
      const { rows, cols } = matrixView(t.shape)
      const rowP = Array.from({ length: rows }, (_, r) => proveSlice(t, 'row', r))
      const colP = Array.from({ length: cols }, (_, c) => proveSlice(t, 'col', c))
      const chunkP = Array.from({ length: Math.ceil(t.values.byteLength / CHUNK_BYTES) }, (_, i) => proveChunk(t, i))
      for (const e of [readOf(t, fine, chunked), writeOf(t, chunked, fine)]) {
        for (let f = 0; f < t.values.length; f += t.dtype === 'bool' ? 3 : 1) {
          const ch = chunkP[elementChunk(t.dtype, f).chunk]
          expect(winner(e, claim(f, ch, rowP[Math.floor(f / cols)]))).toBe('defender')
          expect(winner(e, claim(f, ch, colP[f % cols]))).toBe('defender')
        }
      }
    }
  })

  it('keeps NaN payloads, −0, subnormals and infinities', () => {
    const t = tensor([5, 7], 'float32', 12)
    const u = new Uint32Array(t.values.buffer)
    ;[0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0x00000001, 0x7f800000, 0xff800000].forEach((b, i) => { u[i * 5] = b })
    const e = readOf(t, hex(commitTensor(t).root))
    for (let f = 0; f < 35; f++) for (const axis of ['row', 'col'] as const) expect(winner(e, claim(f, proveElementChunk(t, f), sliceOf(t, axis, f)))).toBe('defender')
  })

  it('and a forged opening is rejected, never ruled for the challenger', () => {
    const f = 5000
    const e = readOf(W, hex(commitTensor(W).root))
    const ch = proveElementChunk(W, f)
    const row = sliceOf(W, 'row', f)
    const lie = flipped(W, f)
    const other = tensor([40, 300], 'float32', 99)
    const forged: Array<[string, unknown]> = [
      ['a chunk with the element changed', claim(f, { ...ch, bytes: proveElementChunk(lie, f).bytes }, row)],
      ['a row with the element changed', claim(f, ch, { ...row, bytes: sliceOf(lie, 'row', f).bytes })],
      ['the changed tensor\'s own openings', claim(f, proveElementChunk(lie, f), sliceOf(lie, 'row', f))],
      ['another tensor\'s chunk', claim(f, proveElementChunk(other, f), row)],
      ['a chunk not holding the element', claim(f, proveChunk(W, 0), row)],
      ['a row not holding the element', claim(f, ch, sliceOf(W, 'row', 0))],
      ['a column not holding the element', claim(f, ch, sliceOf(W, 'col', 0))],
      ['a chunk under another shape', claim(f, { ...proveElementChunk({ ...W, shape: [12000] }, f) }, row)],
      ['a row under another shape', claim(f, ch, proveSlice({ ...W, shape: [40, 1, 300] }, 'row', Math.floor(f / 300)))],
      ['a row under another dtype', claim(f, ch, proveSlice({ shape: W.shape, dtype: 'int32', values: new Int32Array(W.values.buffer) }, 'row', Math.floor(f / 300)))],
      ['an element past the end', claim(12000, ch, row)],
      ['a negative element', claim(-1, ch, row)],
      ['a chunk of the wrong length', claim(f, { ...ch, bytes: ch.bytes.subarray(0, 4092) }, row)],
      ['a path one short', claim(f, { ...ch, siblings: ch.siblings.slice(1) }, row)],
      ['no slice', { flat: f, chunk: ch }],
      ['no chunk', { flat: f, slice: row }],
      ['nothing', null]
    ]
    for (const [what, c] of forged) expect(winner(e, c), what).toBe('rejected')
  })
})

describe('header lies and malformed conversions', () => {
  it('an entry that changes dtype or shape, or has two inputs, loses for its defender', () => {
    const fine = hex(commitTensor(W).root)
    const e = readOf(W, fine)
    const cases: TapeEntry[] = [
      { ...e, outputs: [{ ...e.outputs[0], dtype: 'int32' }] },
      { ...e, outputs: [{ ...e.outputs[0], shape: [40, 1, 300] }] },
      { ...e, inputs: [e.inputs[0], e.inputs[0]] },
      { ...e, outputs: [] }
    ]
    const c = claim(5, proveElementChunk(W, 5), sliceOf(W, 'row', 5))
    for (const bad of cases) expect(judgeConversionElement(bad, c).winner).toBe('challenger')
  })

  it('a commitment made under another header than the entry declares takes no cross-check claim (the roots\' header fact does: docs/disputes.md)', () => {
    // the defender's fine output is the state's bytes under shape [40, 1, 300]: no slice under the entry's [40, 300] verifies
    const reshaped = { ...W, shape: [40, 1, 300] }
    const e = readOf(W, hex(commitTensor(reshaped).root))
    const f = 301
    expect(winner(e, claim(f, proveElementChunk(W, f), sliceOf(W, 'row', f)))).toBe('rejected')
    expect(winner(e, claim(f, proveElementChunk(W, f), proveSlice(reshaped, 'row', 1)))).toBe('rejected')
  })

  it('an empty tensor has no element to claim; an entry that is no conversion takes no conversion claim', () => {
    const empty = tensor([0, 4], 'float32')
    const e = readOf(empty, hex(commitTensor(empty).root))
    expect(winner(e, claim(0, { dtype: 'float32', shape: [0, 4], index: 0, bytes: new Uint8Array(0), siblings: [] }, { ...sliceOf(W, 'row', 0), shape: [0, 4] }))).toBe('rejected')
    const relu: TapeEntry = { ...readOf(W, hex(commitTensor(W).root)), kernel: 'Relu' }
    expect(winner(relu, claim(5, proveElementChunk(W, 5), sliceOf(W, 'row', 5)))).toBe('rejected')
    expect([STATE_READ_KERNEL, STATE_WRITE_KERNEL]).toEqual(['@StateRead', '@StateWrite'])
  })
})
