import { hexToU8a } from '@polkadot/util'
import { matrixView, sizeOf, valuesFromBytes, verifySlice, type DType, type SliceProof, type TypedValues } from '../../../protocols/commit/index.js'

// Single-element adjudication, pure. The claim carries one op's shape, a flat
// output index, the agreed input commitment roots, the operand rows/columns
// with Merkle proofs, and each party's output root with a proof of the row
// holding the element. Every proof is checked, the element is recomputed with
// the reference semantics (protocols/reference, injected so the runtime stays
// testable without it) and compared bitwise with both claims.

import type { OpShape, OperandRef } from '../../../protocols/reference/types.js'
export type { OpShape, OperandRef }

/** The API of protocols/reference/index.ts. */
export interface ReferenceSemantics {
  supportsElement: (runtime: string, kernel: string) => boolean
  elementOperands: (runtime: string, op: OpShape, flatIndex: number) => OperandRef[]
  computeElement: (runtime: string, op: OpShape, flatIndex: number, operands: TypedValues[]) => number
}

/** The claim in plain form (what polkadot.js's createType of AdjudicationClaim gives via toPlain). */
export interface PlainSliceProof { dtype: string, shape: number[], axis: string, index: number, bytes: string, siblings: string[], otherRoot: string }
export interface PlainClaim {
  runtime: string
  op: { kernel: string, attrs: string, inputs: Array<{ shape: number[], dtype: string }>, output: { shape: number[], dtype: string }, outputIndex: number | null }
  flatIndex: number
  inputRoots: string[]
  operands: PlainSliceProof[]
  challengerOutputRoot: string
  challengerRow: PlainSliceProof
  defenderOutputRoot: string
  defenderRow: PlainSliceProof
}

export type AdjudicationError = 'InvalidClaim' | 'InvalidProof' | 'UnsupportedKernel'
export interface AdjudicationResult { computedBits: number, challengerBits: number, defenderBits: number }

const DTYPES: Record<string, DType> = { Float32: 'float32', Int32: 'int32', Bool: 'bool' }
/** Largest operand/row the chain accepts per slice (bytes): keeps a call O(K). */
export const MAX_SLICE_BYTES = 1 << 20

export class AdjudicationRejected extends Error {
  constructor (readonly reason: AdjudicationError, detail: string) {
    super(`${reason}: ${detail}`)
  }
}

function reject (reason: AdjudicationError, detail: string): never { throw new AdjudicationRejected(reason, detail) }

function dtypeOf (s: string): DType {
  const d = DTYPES[s]
  if (d === undefined) reject('InvalidClaim', `dtype ${s}`)
  return d
}

export function sliceFromPlain (p: PlainSliceProof): SliceProof {
  const bytes = hexToU8a(p.bytes)
  if (bytes.length > MAX_SLICE_BYTES) reject('InvalidClaim', 'slice too large')
  return {
    dtype: dtypeOf(p.dtype),
    shape: p.shape,
    axis: p.axis === 'Row' ? 'row' : 'col',
    index: p.index,
    bytes,
    siblings: p.siblings.map(s => hexToU8a(s)),
    otherRoot: hexToU8a(p.otherRoot)
  }
}

export function opFromPlain (p: PlainClaim['op']): OpShape {
  let attrs: unknown
  try {
    attrs = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(hexToU8a(p.attrs)))
  } catch {
    reject('InvalidClaim', 'attrs are not UTF-8 JSON')
  }
  if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) reject('InvalidClaim', 'attrs must be a JSON object')
  const op: OpShape = {
    kernel: p.kernel,
    attrs: attrs as Record<string, unknown>,
    inputs: p.inputs.map(i => ({ shape: i.shape, dtype: dtypeOf(i.dtype) })),
    output: { shape: p.output.shape, dtype: dtypeOf(p.output.dtype) }
  }
  if (p.outputIndex !== null) op.outputIndex = p.outputIndex
  return op
}

function sameShape (a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/** Bits of one element as u32 (float32 bit pattern, int32 two's complement, bool 0/1). */
export function elementBits (dtype: DType, v: number): number {
  if (dtype === 'float32') return new Uint32Array(new Float32Array([v]).buffer)[0]
  if (dtype === 'int32') return (v | 0) >>> 0
  return v !== 0 ? 1 : 0
}

function bitsAt (dtype: DType, values: TypedValues, i: number): number {
  if (dtype === 'float32') return new Uint32Array(values.buffer, values.byteOffset, values.length)[i]
  return elementBits(dtype, values[i])
}

/** The claimed element of one party: verifies the row proof against its output root. */
function partyBits (op: OpShape, flatIndex: number, root: Uint8Array, row: SliceProof, who: string): number {
  const { cols } = matrixView(op.output.shape)
  if (row.axis !== 'row' || row.dtype !== op.output.dtype || !sameShape(row.shape, op.output.shape)) reject('InvalidClaim', `${who} row proof is not a row of the output`)
  if (row.index !== Math.floor(flatIndex / cols)) reject('InvalidClaim', `${who} row proof is for row ${row.index}`)
  if (!verifySlice(root, row)) reject('InvalidProof', `${who} output row`)
  return bitsAt(op.output.dtype, valuesFromBytes(row.dtype, row.bytes), flatIndex % cols)
}

export function adjudicateClaim (ref: ReferenceSemantics | undefined, claim: PlainClaim): AdjudicationResult {
  if (ref === undefined) reject('UnsupportedKernel', 'no reference semantics loaded')
  const op = opFromPlain(claim.op)
  if (!ref.supportsElement(claim.runtime, op.kernel)) reject('UnsupportedKernel', `${claim.runtime} ${op.kernel}`)
  let outSize: number
  try { outSize = sizeOf(op.output.shape); op.inputs.forEach(i => sizeOf(i.shape)) } catch { reject('InvalidClaim', 'bad shape') }
  const f = claim.flatIndex
  if (!Number.isInteger(f) || f < 0 || f >= outSize) reject('InvalidClaim', `flat index ${f} outside output of ${outSize}`)
  if (claim.inputRoots.length !== op.inputs.length) reject('InvalidClaim', 'one input root per op input')
  let refs: OperandRef[]
  try { refs = ref.elementOperands(claim.runtime, op, f) } catch (e) { reject('InvalidClaim', `operands: ${(e as Error).message}`) }
  if (refs.length !== claim.operands.length) reject('InvalidClaim', `expected ${refs.length} operand proofs, got ${claim.operands.length}`)
  const operands: TypedValues[] = []
  refs.forEach((r, i) => {
    const p = sliceFromPlain(claim.operands[i])
    const spec = op.inputs[r.input]
    if (spec === undefined) reject('InvalidClaim', `operand ${i} names input ${r.input}`)
    if (p.axis !== r.axis || p.index !== r.index) reject('InvalidClaim', `operand ${i} must be ${r.axis} ${r.index} of input ${r.input}`)
    if (p.dtype !== spec.dtype || !sameShape(p.shape, spec.shape)) reject('InvalidClaim', `operand ${i} dtype/shape differ from input ${r.input}`)
    if (!verifySlice(hexToU8a(claim.inputRoots[r.input]), p)) reject('InvalidProof', `operand ${i} (input ${r.input} ${r.axis} ${r.index})`)
    operands.push(valuesFromBytes(p.dtype, p.bytes))
  })
  const challengerBits = partyBits(op, f, hexToU8a(claim.challengerOutputRoot), sliceFromPlain(claim.challengerRow), 'challenger')
  const defenderBits = partyBits(op, f, hexToU8a(claim.defenderOutputRoot), sliceFromPlain(claim.defenderRow), 'defender')
  let value: number
  try { value = ref.computeElement(claim.runtime, op, f, operands) } catch (e) { reject('InvalidClaim', `compute: ${(e as Error).message}`) }
  return { computedBits: elementBits(op.output.dtype, value), challengerBits, defenderBits }
}
