import { decode, encode } from 'cborg'
import { bytesEqual } from '../commit/merkle.js'
import { MAX_ENTRY_INPUTS, type TapeEntry, type TapeInput } from '../tape/tape.js'

// Decoding a tape entry from untrusted bytes (a claim, a message): the
// structure is checked so later code can index it without crashing. The
// bytes themselves are what a tape root commits to (leaf = sha256(bytes)).

const HEX64 = /^[0-9a-f]{64}$/
const DTYPES = ['float32', 'int32', 'bool']

function shapeOk (s: unknown): s is number[] {
  return Array.isArray(s) && s.length <= 8 && s.every(d => Number.isInteger(d) && d >= 0 && d <= 1 << 24)
}

export function decodeEntry (bytes: Uint8Array): TapeEntry | undefined {
  let e: TapeEntry
  try { e = decode(bytes) as TapeEntry } catch { return undefined }
  if (typeof e !== 'object' || e === null || !Number.isInteger(e.index) || e.index < 0 || typeof e.kernel !== 'string') return undefined
  if (typeof e.attrs !== 'object' || e.attrs === null || !Array.isArray(e.inputs) || !Array.isArray(e.outputs)) return undefined
  if (e.inputs.length > MAX_ENTRY_INPUTS || e.outputs.length > 16) return undefined
  for (const i of e.inputs) {
    if (typeof i !== 'object' || i === null || typeof i.name !== 'string' || !DTYPES.includes(i.dtype) || !shapeOk(i.shape) || !HEX64.test(String(i.commitment))) return undefined
    const r = i.ref as { kind?: string, index?: number, output?: number, name?: string }
    if (typeof r !== 'object' || r === null) return undefined
    if (r.kind === 'state' && !(Number.isInteger(r.index) && (r.index as number) >= 0)) return undefined
    if (r.kind === 'op' && !(Number.isInteger(r.index) && Number.isInteger(r.output) && (r.index as number) >= 0 && (r.index as number) < e.index && (r.output as number) >= 0)) return undefined
    if (r.kind === 'data' && r.name !== 'x' && r.name !== 'y') return undefined
    if (!['state', 'op', 'data', 'const'].includes(String(r.kind))) return undefined
  }
  for (const o of e.outputs) {
    if (typeof o !== 'object' || o === null || !DTYPES.includes(o.dtype) || !shapeOk(o.shape) || !HEX64.test(String(o.commitment))) return undefined
  }
  return bytesEqual(encode(canonicalEntry(e)), bytes) ? e : undefined
}

/** Exactly the fields a tape entry has (an inline value only on a constant input), as the recorder writes them. */
function canonicalEntry (e: TapeEntry): TapeEntry {
  return {
    index: e.index,
    kernel: e.kernel,
    attrs: e.attrs,
    inputs: e.inputs.map(i => ({
      name: i.name, ref: refOf(i.ref), dtype: i.dtype, shape: i.shape, commitment: i.commitment, ...(i.ref.kind === 'const' && i.value !== undefined ? { value: i.value } : {})
    })),
    outputs: e.outputs.map(o => ({ dtype: o.dtype, shape: o.shape, commitment: o.commitment }))
  }
}

function refOf (r: TapeInput['ref']): TapeInput['ref'] {
  switch (r.kind) {
    case 'state': return { kind: 'state', index: r.index }
    case 'op': return { kind: 'op', index: r.index, output: r.output }
    case 'data': return { kind: 'data', name: r.name }
    default: return { kind: 'const' }
  }
}
