import * as tf from '@tensorflow/tfjs'
import { matrixView, type TensorData, type TypedValues } from '../../../protocols/commit/index.js'
import { computeElementBits, elementOperands, type OpShape, type OperandRef } from '../../../protocols/reference/index.js'

// Shared by the reference tests: run one kernel on the real backend and compare
// every (or a spread of) output element's BITS with the reference's.

export const hex = (u: number): string => '0x' + (u >>> 0).toString(16).padStart(8, '0')

/** The committed bits of element i (float32 pattern, int32 as uint32, bool byte). */
export function bitsAt (v: TypedValues, i: number): number {
  if (v instanceof Float32Array) return new Uint32Array(v.buffer, v.byteOffset, v.length)[i]
  if (v instanceof Int32Array) return v[i] >>> 0
  return v[i]
}

export function f32FromBits (bits: number[], shape?: number[]): TensorData {
  const values = new Float32Array(Uint32Array.from(bits).buffer)
  return { shape: shape ?? [bits.length], dtype: 'float32', values }
}

/** Row or column r of t's matrix view (a bit-exact copy). */
export function operandSlice (t: TensorData, r: OperandRef): TypedValues {
  const { rows, cols } = matrixView(t.shape)
  if (r.axis === 'row') return t.values.subarray(r.index * cols, (r.index + 1) * cols)
  const src = bitsOrBytes(t.values)
  const out = new (src.constructor as Uint32ArrayConstructor)(rows)
  for (let i = 0; i < rows; i++) out[i] = src[i * cols + r.index]
  if (t.values instanceof Float32Array) return new Float32Array(out.buffer)
  return t.values instanceof Int32Array ? new Int32Array(out.buffer) : out as unknown as Uint8Array
}
function bitsOrBytes (v: TypedValues): Uint32Array | Uint8Array { return v instanceof Uint8Array ? v : new Uint32Array(v.buffer, v.byteOffset, v.length) }

const isNaNBits = (u: number): boolean => (u & 0x7fffffff) >>> 0 > 0x7f800000

/** Elements the reference refused as NaNs of unknown bits (two different NaNs meet: protocols/reference/dot.ts; any NaN on cpu: cpu.ts), by kernel. */
export const refusedAmbiguousNaN = new Map<string, number>()

/**
 * Checks `limit` elements (first, last, and spread; all when limit >= n) of one
 * op; throws on the first bit mismatch. A refusal of a NaN's bits is
 * accepted only where the backend's value is a NaN (so only a NaN's bits are
 * left open, never whether the value is a NaN).
 */
export function checkOp (runtime: string, op: OpShape, inputs: TensorData[], out: TypedValues, limit = 400): number {
  const n = out.length
  const step = Math.max(1, Math.floor(n / limit))
  let checked = 0
  for (let e = 0; e < n; e += step) {
    const refs = elementOperands(runtime, op, e)
    const ops = refs.map(r => operandSlice(inputs[r.input], r))
    const got = bitsAt(out, e)
    let want: number
    try {
      want = computeElementBits(runtime, op, e, ops)
    } catch (x) {
      if (!/two different NaNs|a NaN result has no defined bits/.test((x as Error).message)) throw x
      if (!(out instanceof Float32Array) || !isNaNBits(got)) throw new Error(`${op.kernel} element ${e}: refused as an ambiguous NaN but the backend gives ${hex(got)}`)
      refusedAmbiguousNaN.set(op.kernel, (refusedAmbiguousNaN.get(op.kernel) ?? 0) + 1)
      continue
    }
    if (want !== got) {
      const ins = refs.map(r => `${r.axis} ${r.index} of input ${r.input}: [${[...new Uint32Array(operandSlice(inputs[r.input], r).slice().buffer)].map(hex).join(' ')}]`)
      throw new Error(`${op.kernel} element ${e}: reference ${hex(want)} != backend ${hex(got)} attrs ${JSON.stringify(op.attrs)} shapes ${JSON.stringify(op.inputs.map(i => i.shape))} operands ${ins.join('; ').slice(0, 600)}`)
    }
    checked++
  }
  return checked
}

export function runBackend (kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown>): TensorData {
  const named: Record<string, tf.Tensor> = {}
  names.forEach((n, i) => { named[n] = tf.tensor(inputs[i].values, inputs[i].shape, inputs[i].dtype) })
  const o = tf.engine().runKernel(kernel, named as tf.NamedTensorMap, attrs as tf.NamedAttrMap) as tf.Tensor
  const r = { shape: [...o.shape], dtype: o.dtype as TensorData['dtype'], values: (o.dataSync() as TypedValues).slice() }
  o.dispose(); for (const t of Object.values(named)) t.dispose()
  return r
}

export function check (runtime: string, kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown> = {}, limit = 400): number {
  const out = runBackend(kernel, names, inputs, attrs)
  const op: OpShape = { kernel, attrs, inputs: inputs.map(i => ({ shape: i.shape, dtype: i.dtype })), output: { shape: out.shape, dtype: out.dtype } }
  return checkOp(runtime, op, inputs, out.values, limit)
}
