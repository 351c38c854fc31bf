import { chunkElementBits, verifyChunk } from '../commit/chunked.js'
import { fromHex } from '../commit/merkle.js'
import { sizeOf, sliceBytes, valuesFromBytes, verifySlice, type SliceProof } from '../commit/tensor.js'
import type { TapeEntry } from '../tape/tape.js'
import type { NanClaim } from './claim-kinds.js'
import { bitsAt, chunk, hashes, int, onPath, posInSlice, sameShape, slice, tensorOf } from './claim-fields.js'
import type { ChunkedHead, TensorHead } from './claim-parts.js'
import { provenEntry, stateLeafProven, tapeCommit } from './claim-proofs.js'
import type { StepEnv } from './judge-env.js'
import { bytesHoldNaN, isNaNBits, runPosition } from './nan.js'
import { reject, type Ruling } from './ruling.js'

// NaNs in what the defender committed (nan.ts: a NaN ends the run, an honest
// run commits none): the nan claim, and the NaN an element claim meets.

/**
 * Why an element claim's NaN loses for the defender, if it does: a NaN in an
 * operand slice of a state or op input (data and constants are the task's,
 * not the defender's), in the output before the run's divergence point, or
 * no NaN at the divergence point itself.
 */
export function nanRule (
  e: TapeEntry, inputs: number[], proofs: SliceProof[], at: ReturnType<typeof runPosition>, flat: number, out: SliceProof, got: number, divFlat = 0
): string | undefined {
  for (let i = 0; i < proofs.length; i++) {
    const kind = e.inputs[inputs[i]].ref.kind
    if ((kind === 'state' || kind === 'op') && bytesHoldNaN(proofs[i].dtype, proofs[i].bytes)) return `NaN in a committed tensor: operand ${i} (input ${inputs[i]}) of entry ${e.index}`
  }
  if (out.dtype !== 'float32') return undefined
  if (at === 'normal' || at === 'before') return bytesHoldNaN('float32', out.bytes) ? `NaN in a committed tensor: the output of entry ${e.index}` : undefined
  // at the divergence point: NaN-free operands, so the reference is exact from here on
  if (flat < divFlat && isNaNBits(got)) return `a NaN at element ${flat} of entry ${e.index}, before the divergence point's element ${divFlat}`
  if (flat === divFlat && !isNaNBits(got)) return `the divergence point (entry ${e.index}, element ${flat}) holds no NaN`
  return undefined
}

export function judgeNan (env: StepEnv, c: NanClaim, defenderLoses: (r: string) => Ruling, challengerLoses: (r: string) => Ruling): Ruling {
  const flat = int(c.flat, 'flat')
  let where: string
  let at: ReturnType<typeof runPosition> = 'normal'
  let bits: number
  if (c.state !== undefined && c.op === undefined) {
    const st = c.state
    const i = int(st.index, 'nan.state.index')
    // the disputed step's own states: an accepting verdict that replayed this step vouched for them
    if (env.seg === undefined && ((i !== env.step && i !== env.step + 1) || i > env.stepCount)) reject('InvalidClaim', 'nan: the state must be the disputed step\'s pre- or post-state')
    // a NaN in the preimage of a marked leaf: the solver continued from it
    const root = stateLeafProven(env, i, st.root, st.rootPath, 'pre')
    const t = int(st.t, 'nan.state.t')
    const tensor = tensorOf(st.tensor)
    if (!onPath(root, tensor, t, hashes(st.tensorPath, 'nan.state.tensorPath'))) reject('InvalidProof', `nan: tensor ${t} is not in state root ${i}`)
    const head = st.tensor as TensorHead | ChunkedHead
    if ('chunkRoot' in head) bits = chunkedStateBits(c, head, tensor, flat)
    else {
      const s = nanSlice(c)
      if (s.dtype !== head.dtype || !sameShape(s.shape, head.shape)) reject('InvalidClaim', 'nan: the slice is not of the tensor')
      if (!verifySlice(tensor, s)) reject('InvalidProof', 'nan: state tensor slice')
      bits = sliceBits(s, flat)
    }
    where = `state tensor ${t} of state ${i}`
  } else if (c.op !== undefined && c.state === undefined) {
    const s = nanSlice(c)
    const commit = tapeCommit(env, c.op.commit)
    const e = provenEntry(env, commit, c.op, 'nan')
    const out = e.outputs[0]
    if (out === undefined) reject('InvalidClaim', `nan: entry ${e.index} has no output`)
    if (s.dtype !== out.dtype || !sameShape(s.shape, out.shape)) reject('InvalidClaim', 'nan: the slice is not of the output')
    if (!verifySlice(fromHex(out.commitment), s)) reject('InvalidProof', 'nan: output slice')
    bits = sliceBits(s, flat)
    at = runPosition(env, e.index)
    where = `the output of entry ${e.index} (${e.kernel})`
  } else reject('InvalidClaim', 'nan: name a state tensor or a tape entry')
  if (!isNaNBits(bits)) return challengerLoses(`element ${flat} of ${where} is not a NaN`)
  if (at === 'after' || (at === 'at' && flat >= (env.divergence?.flat ?? 0))) return challengerLoses(`element ${flat} of ${where} is at or past the run's divergence point`)
  return defenderLoses(`NaN in a committed tensor: element ${flat} of ${where}`)
}

function nanSlice (c: NanClaim): SliceProof {
  const s = slice(c.slice, 'slice')
  if (s.dtype !== 'float32') reject('InvalidClaim', 'nan: only float32 tensors hold NaNs')
  return s
}

/** Bits of element `flat` of a verified slice. */
function sliceBits (s: SliceProof, flat: number): number {
  const pos = posInSlice(s.shape, s.axis, s.index, flat)
  if (flat >= sizeOf(s.shape) || pos === undefined) reject('InvalidClaim', 'nan: the slice does not hold the element')
  return bitsAt('float32', valuesFromBytes('float32', sliceBytes(s)), pos)
}

/** A state tensor under a chunked state root (commit/chunked.ts; not yet in use): its element read from its chunk. */
function chunkedStateBits (c: NanClaim, head: ChunkedHead, tensor: Uint8Array, flat: number): number {
  const ch = chunk(c.chunk, 'chunk')
  if (ch.dtype !== 'float32') reject('InvalidClaim', 'nan: only float32 tensors hold NaNs')
  if (ch.dtype !== head.dtype || !sameShape(ch.shape, head.shape)) reject('InvalidClaim', 'nan: the chunk is not of the tensor')
  if (!verifyChunk(tensor, ch)) reject('InvalidProof', 'nan: state tensor chunk')
  const bits = chunkElementBits(ch, flat)
  if (bits === undefined) reject('InvalidClaim', 'nan: the chunk does not hold the element')
  return bits
}
