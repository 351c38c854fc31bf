import { fromHex } from '../commit/merkle.js'
import { proveSlice, sliceBytes, valuesFromBytes, verifySlice, type SliceProof, type TensorData } from '../commit/tensor.js'
import type { TapeEntry } from '../tape/tape.js'
import { computeElementBits, elementOperands, opShapeOf } from './index.js'
import type { OperandRef } from './types.js'

// The last step of a dispute: one output element of one op. The claimant
// supplies the rows/columns the element reads, each with a Merkle proof against
// the input commitment recorded in the (agreed) tape entry; the referee
// recomputes the element with the reference semantics. O(K) data, no tensor.

export interface ElementClaim {
  flatIndex: number
  outputIndex: number
  operands: OperandRef[]
  proofs: SliceProof[]
  /** the bits of the element the claimant says the op produced (float32 pattern, int32 as uint32, bool byte) */
  bits: number
}

/** Builds the claim for element `flatIndex` from the op's full input values. */
export function buildElementClaim (
  runtime: string, entry: TapeEntry, inputs: readonly TensorData[], flatIndex: number, bits: number, outputIndex = 0
): ElementClaim {
  const op = opShapeOf(entry, outputIndex)
  const operands = elementOperands(runtime, op, flatIndex)
  const proofs = operands.map(r => proveSlice(inputs[r.input], r.axis, r.index))
  return { flatIndex, outputIndex, operands, proofs, bits: bits >>> 0 }
}

/** `expected`: the reference's bits for the element. */
export interface ClaimVerdict { valid: boolean, reason?: string, expected?: number }

/**
 * Checks a claim against a tape entry: every operand proof must match the
 * requested row/column and verify against the entry's input commitment; then
 * the reference value must equal the claimed value bit for bit. Never throws.
 */
export function checkElementClaim (runtime: string, entry: TapeEntry, claim: ElementClaim): ClaimVerdict {
  try {
    const op = opShapeOf(entry, claim.outputIndex)
    const want = elementOperands(runtime, op, claim.flatIndex)
    if (claim.proofs.length !== want.length) return { valid: false, reason: `expected ${want.length} operand proofs, got ${claim.proofs.length}` }
    const values = []
    for (let i = 0; i < want.length; i++) {
      const r = want[i]; const p = claim.proofs[i]
      const inp = entry.inputs[r.input]
      if (p.axis !== r.axis || p.index !== r.index || p.dtype !== inp.dtype || p.shape.length !== inp.shape.length || p.shape.some((d, k) => d !== inp.shape[k])) return { valid: false, reason: `operand ${i} is not ${r.axis} ${r.index} of input ${r.input}` }
      if (!verifySlice(fromHex(inp.commitment), p)) return { valid: false, reason: `operand ${i} does not verify against input ${r.input}'s commitment` }
      values.push(valuesFromBytes(p.dtype, sliceBytes(p)))
    }
    const expected = computeElementBits(runtime, op, claim.flatIndex, values)
    // bits, not values: -0 differs from +0 and every NaN pattern from every other
    return expected === claim.bits >>> 0 ? { valid: true, expected } : { valid: false, reason: 'the claimed value differs from the reference', expected }
  } catch (e) {
    return { valid: false, reason: (e as Error).message }
  }
}
