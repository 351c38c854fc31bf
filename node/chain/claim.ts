import { u8aToHex } from '@polkadot/util'
import type { DType, SliceProof } from '../../protocols/commit/index.js'

// Builds the SCALE-shaped argument of Arbitration.adjudicate from commitment
// proofs (protocols/commit SliceProof). Pure.

export interface OpShapeInput {
  kernel: string
  attrs: Record<string, unknown>
  inputs: Array<{ shape: number[], dtype: DType }>
  output: { shape: number[], dtype: DType }
  outputIndex?: number
}

export interface ClaimInput {
  /** the task's pinned runtime, e.g. "tfjs-wasm@4.22.0-simd" */
  runtime: string
  op: OpShapeInput
  flatIndex: number
  /** agreed commitment roots of the op's inputs, in input order */
  inputRoots: Uint8Array[]
  /** one slice proof per operand, in the order elementOperands returns */
  operands: SliceProof[]
  challenger: { outputRoot: Uint8Array, row: SliceProof }
  defender: { outputRoot: Uint8Array, row: SliceProof }
}

const DTYPE: Record<DType, string> = { float32: 'Float32', int32: 'Int32', bool: 'Bool' }

/** JSON with object keys sorted at every level: the canonical attrs encoding. */
export function canonicalJson (v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

export function sliceToScale (p: SliceProof): Record<string, unknown> {
  return {
    dtype: DTYPE[p.dtype],
    shape: p.shape,
    axis: p.axis === 'row' ? 'Row' : 'Col',
    index: p.index,
    bytes: u8aToHex(p.bytes),
    siblings: p.siblings.map(s => u8aToHex(s)),
    otherRoot: u8aToHex(p.otherRoot)
  }
}

export function claimToScale (c: ClaimInput): Record<string, unknown> {
  return {
    runtime: c.runtime,
    op: {
      kernel: c.op.kernel,
      attrs: u8aToHex(new TextEncoder().encode(canonicalJson(c.op.attrs))),
      inputs: c.op.inputs.map(i => ({ shape: i.shape, dtype: DTYPE[i.dtype] })),
      output: { shape: c.op.output.shape, dtype: DTYPE[c.op.output.dtype] },
      outputIndex: c.op.outputIndex ?? null
    },
    flatIndex: c.flatIndex,
    inputRoots: c.inputRoots.map(r => u8aToHex(r)),
    operands: c.operands.map(sliceToScale),
    challengerOutputRoot: u8aToHex(c.challenger.outputRoot),
    challengerRow: sliceToScale(c.challenger.row),
    defenderOutputRoot: u8aToHex(c.defender.outputRoot),
    defenderRow: sliceToScale(c.defender.row)
  }
}
