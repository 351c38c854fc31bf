import { matrixView, sizeOf } from '../commit/tensor.js'
import type { OperandRef } from './types.js'

// Index helpers: multi-index <-> flat (row-major), numpy broadcasting, and the
// row of the matrix view that holds one element.

export function strides (shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length)
  let acc = 1
  for (let i = shape.length - 1; i >= 0; i--) { s[i] = acc; acc *= shape[i] }
  return s
}

export function unravel (flat: number, shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length)
  let r = flat
  for (let i = shape.length - 1; i >= 0; i--) { out[i] = r % shape[i]; r = Math.floor(r / shape[i]) }
  return out
}

/** Flat index into `inShape` of the element broadcast to output coordinates `outIdx`. */
export function broadcastIndex (outIdx: readonly number[], inShape: readonly number[]): number {
  const st = strides(inShape)
  const off = outIdx.length - inShape.length
  let f = 0
  for (let i = 0; i < inShape.length; i++) f += (inShape[i] === 1 ? 0 : outIdx[i + off]) * st[i]
  return f
}

export function checkFlat (flat: number, shape: readonly number[]): void {
  const n = sizeOf(shape)
  if (!Number.isInteger(flat) || flat < 0 || flat >= n) throw new RangeError(`output element ${flat} out of range [0, ${n})`)
}

/** The row operand containing element `flat` of input `input`, and the element's position in it. */
export function rowOf (input: number, shape: readonly number[], flat: number): { ref: OperandRef, pos: number } {
  const { cols } = matrixView(shape)
  return { ref: { input, axis: 'row', index: Math.floor(flat / cols) }, pos: flat % cols }
}
