import { fromHex } from '../commit/merkle.js'
import { chunkElementBits, verifyChunk } from '../commit/chunked.js'
import { dtypeBytes, sizeOf, sliceBytes, verifySlice, type DType } from '../commit/tensor.js'
import { conversionSides, isStateConversion } from '../tape/state-io.js'
import type { TapeEntry } from '../tape/tape.js'
import { chunk, int, posInSlice, sameShape, slice } from './claim-fields.js'
import type { ClaimChunk, ClaimSlice } from './claim-parts.js'
import { reject } from './ruling.js'

// The element claim of a state conversion (@StateRead, @StateWrite:
// protocols/tape/state-io.ts; docs/training.md "Chunked roots: design", not yet
// reachable in the game): a cross-check. The challenger names element `flat`
// and proves it twice against the entry's own commitments: in its chunk under
// the chunked side, in a row or column leaf under the row + column side. The
// conversion is an identity, so the two bits must be equal: they differ → the
// defender loses; they are equal → the challenger loses. Like any element
// claim it takes the entry's commitments as given; whether the input is the
// state tensor or the op output it names is the `input` claim's fact.
//
// Who can win what: both openings are checked against commitments the
// defender signed (binding dtype and shape), so an honest defender's two
// sides hold the same bytes and no verifying pair can differ; a defender whose
// row + column commitment holds one element other than its chunks (in a row
// leaf, or only in its column tree) loses to the pair naming that element.

export interface ConversionClaim { flat: number, chunk: ClaimChunk, slice: ClaimSlice }
export interface ConversionRuling { winner: 'challenger' | 'defender', reason: string }

/** Bits of element `pos` of a row or column's canonical little-endian bytes. */
function bitsOf (dtype: DType, bytes: Uint8Array, pos: number): number {
  if (dtypeBytes(dtype) === 1) return bytes[pos]
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4 * pos, true)
}

/**
 * The ruling on a conversion element claim about entry `e` (already proven to be
 * in the defender's signed tape). A claim that does not prove what it states is
 * rejected (ClaimRejected: InvalidClaim, InvalidProof), never ruled on.
 */
export function judgeConversionElement (e: TapeEntry, claim: unknown): ConversionRuling {
  const sides = conversionSides(e)
  // an honest tape's conversions are well formed: anything else is the defender's own entry
  if ('malformed' in sides) {
    if (!isStateConversion(e.kernel)) reject('InvalidClaim', sides.malformed)
    return { winner: 'challenger', reason: sides.malformed }
  }
  const c = claim as ConversionClaim
  if (typeof c !== 'object' || c === null) reject('InvalidClaim', 'conversion claim: not an object')
  const flat = int(c.flat, 'flat')
  if (flat >= sizeOf(sides.shape)) reject('InvalidClaim', `flat index ${flat} outside [${sides.shape.join(',')}]`)
  const ch = chunk(c.chunk, 'chunk')
  if (ch.dtype !== sides.dtype || !sameShape(ch.shape, sides.shape)) reject('InvalidClaim', 'the chunk states another dtype or shape than the entry')
  if (!verifyChunk(fromHex(sides.chunked), ch)) reject('InvalidProof', `chunk ${ch.index} is not under the entry's chunked commitment`)
  const inChunk = chunkElementBits(ch, flat)
  if (inChunk === undefined) reject('InvalidClaim', `chunk ${ch.index} does not hold element ${flat}`)
  const d = slice(c.slice, 'slice')
  if (d.dtype !== sides.dtype || !sameShape(d.shape, sides.shape)) reject('InvalidClaim', 'the slice states another dtype or shape than the entry')
  const pos = posInSlice(sides.shape, d.axis, d.index, flat)
  if (pos === undefined) reject('InvalidClaim', `${d.axis} ${d.index} does not hold element ${flat}`)
  if (!verifySlice(fromHex(sides.fine), d)) reject('InvalidProof', `${d.axis} ${d.index} is not under the entry's row + column commitment`)
  const inSlice = bitsOf(d.dtype, sliceBytes(d), pos)
  const where = `element ${flat} of ${e.kernel} entry ${e.index}`
  return inChunk === inSlice
    ? { winner: 'defender', reason: `${where} is the same in its chunk and its ${d.axis} (0x${inChunk.toString(16)})` }
    : { winner: 'challenger', reason: `${where}: chunk 0x${inChunk.toString(16)}, ${d.axis} 0x${inSlice.toString(16)}` }
}
