import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { decode, encode } from 'cborg'
import type { DType, SliceProof, TensorData } from '../../protocols/commit/tensor.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'

// The file an engine tape job (jobs.ts) hands to the peer: the op
// tape of one step with the values of every op's inputs and outputs, the
// pre-state leaves and (challenger) proofs of the step's batch rows. CBOR;
// tensors as raw little-endian bytes. No tfjs here: the peer reads it.

export const TAPE_FILE_VERSION = 1
/** An MLP step is a few MB; anything past this is refused. */
export const MAX_TAPE_FILE_BYTES = 512 * 1024 * 1024

interface WireTensor { s: number[], d: DType, b: Uint8Array }

export interface TapeFile {
  /** on-chain step: the transition from state `step` to `step + 1` */
  step: number
  entries: TapeEntry[]
  values: Array<{ inputs: TensorData[], outputs: TensorData[] }>
  stateRootBefore: string
  stateRootAfter: string
  /** leaves of the pre-state root (tensor commitments + step leaf) */
  preLeaves: Uint8Array[]
  dataset?: { xRoot: Uint8Array, yRoot: Uint8Array, rows: Array<{ row: number, x: SliceProof, y: SliceProof }> }
  /** the dataset rows of this step's batch, in batch order */
  batchRows: number[]
}

function toWire (t: TensorData): WireTensor {
  const v = t.values
  return { s: [...t.shape], d: t.dtype, b: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) }
}

function fromWire (w: WireTensor): TensorData {
  const b = w.b.slice() // aligned copy
  const values = w.d === 'float32' ? new Float32Array(b.buffer) : w.d === 'int32' ? new Int32Array(b.buffer) : new Uint8Array(b.buffer)
  return { shape: w.s, dtype: w.d, values }
}

export function encodeTapeFile (f: TapeFile): Uint8Array {
  return encode({
    v: TAPE_FILE_VERSION,
    step: f.step,
    // entries as JSON: optional fields stay optional (CBOR would need undefined)
    entries: JSON.stringify(f.entries),
    values: f.values.map(v => ({ i: v.inputs.map(toWire), o: v.outputs.map(toWire) })),
    before: f.stateRootBefore,
    after: f.stateRootAfter,
    preLeaves: f.preLeaves,
    batchRows: f.batchRows,
    ...(
      f.dataset != null
        ? {
            dataset: {
              xRoot: f.dataset.xRoot, yRoot: f.dataset.yRoot,
              rows: f.dataset.rows.map(r => ({ row: r.row, x: JSON.stringify(sliceToJson(r.x)), y: JSON.stringify(sliceToJson(r.y)) }))
            }
          }
        : {}
    )
  })
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'))
function sliceToJson (p: SliceProof): unknown { return { ...p, bytes: hex(p.bytes), siblings: p.siblings.map(hex), otherRoot: hex(p.otherRoot) } }
function sliceFromJson (s: string): SliceProof {
  const j = JSON.parse(s) as SliceProof & { bytes: string, siblings: string[], otherRoot: string }
  return { ...j, bytes: unhex(j.bytes), siblings: j.siblings.map(unhex), otherRoot: unhex(j.otherRoot) }
}

export function decodeTapeFile (bytes: Uint8Array): TapeFile {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded CBOR, checked field by field below
  const o = decode(bytes) as Record<string, any>
  if (o?.v !== TAPE_FILE_VERSION) throw new Error('not a version 1 tape file')
  if (!Number.isInteger(o.step) || o.step < 0) throw new Error('tape file: bad step')
  const entries = JSON.parse(String(o.entries)) as TapeEntry[]
  if (!Array.isArray(entries) || !Array.isArray(o.values) || o.values.length !== entries.length) throw new Error('tape file: entries and values differ in length')
  return {
    step: o.step,
    entries,
    values: (o.values as Array<{ i: WireTensor[], o: WireTensor[] }>).map(v => ({ inputs: v.i.map(fromWire), outputs: v.o.map(fromWire) })),
    stateRootBefore: String(o.before),
    stateRootAfter: String(o.after),
    preLeaves: o.preLeaves as Uint8Array[],
    batchRows: o.batchRows as number[],
    dataset: o.dataset == null
      ? undefined
      : {
          xRoot: o.dataset.xRoot, yRoot: o.dataset.yRoot,
          rows: (o.dataset.rows as Array<{ row: number, x: string, y: string }>).map(r => ({ row: r.row, x: sliceFromJson(r.x), y: sliceFromJson(r.y) }))
        }
  }
}

/** Reads a tape file, refusing one over MAX_TAPE_FILE_BYTES. */
export function readTapeFile (file: string): TapeFile {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (size > MAX_TAPE_FILE_BYTES) throw new Error(`tape file ${file} is ${size} bytes (limit ${MAX_TAPE_FILE_BYTES})`)
    const buf = Buffer.alloc(size)
    let off = 0
    while (off < size) { const n = readSync(fd, buf, off, size - off, off); if (n <= 0) break; off += n }
    return decodeTapeFile(new Uint8Array(buf.buffer, buf.byteOffset, off))
  } finally { closeSync(fd) }
}
