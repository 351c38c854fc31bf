import { decode, encode } from 'cborg'
import { bytesEqual, leafHash, nodeHash, ZERO_HASH } from '../commit/merkle.js'
import { axisLayout, commitTensor, groupSize, valuesFromBytes, verifySlice, type SliceProof, type TensorData } from '../commit/tensor.js'
import { datasetRootOf } from '../dispute/dataset.js'
import { DataOrder } from '../data/order.js'

// Serving a withheld dataset through the chain (docs/economics.md "A withheld
// dataset"). The task commits dataset_root = nodeHash(xRoot, yRoot) over the
// normalised float32 input rows [trainSize, rowSize] and the one-hot labels
// [trainSize, classes] (protocols/dispute/dataset.ts), the trees a `data`
// claim opens one row of. A drawn verifier that cannot fetch the dataset
// challenges the submitter, and the submitter answers by putting on chain the
// rows of every batch the verifier's required sample replays: for each unit
// of that sample, the steps from the checkpoint its replay loads to the unit's
// end (what a replay reads; a dispute of that unit re-runs the same steps).
// Rows in one global order (step by step, batch position by position), each
// row's x and y leaves with their paths, in parts of at most
// MAX_DATASET_PART_BYTES each starting at or before where the last stopped
// (a part overlapping rows already in counts its new rows only: a server's
// parts, built from what the chain held when it read it, stay good when
// someone else's rows land first). What is on chain once the last row is in
// is the committed rows, bit for bit: the verifier replays from them
// (servedBatches).
//
// Pure: the chain runtime, the submitter's node and the verifier share it.

export const DATASET_SERVE_VERSION = 1
/** The chain refuses a larger part (it goes on chain, in an event). */
export const MAX_DATASET_PART_BYTES = 1024 * 1024
/**
 * The pace a serve keeps its challenge open at: past the answer window, one
 * block for each this many bytes of rows on chain. A submitter serving is not
 * timed out for the size of what it serves, and a dribbled serve (anyone may
 * serve, the challenger too) holds the task a block per 128 KiB at most.
 */
export const DATASET_PACE_BYTES = 128 * 1024
const MAX_DEPTH = 40

export type DatasetServeError = 'ResponseTooLarge' | 'InvalidDatasetServe' | 'DatasetProofInvalid'

export class DatasetServeRejected extends Error {
  constructor (readonly reason: DatasetServeError, detail: string) { super(`${reason}: ${detail}`); this.name = 'DatasetServeRejected' }
}
function reject (reason: DatasetServeError, detail: string): never { throw new DatasetServeRejected(reason, detail) }

/** What a dataset serve is checked against: the task's root and the program's data order. */
export interface DatasetFacts { seed: number, trainSize: number, batchSize: number, rowSize: number, classes: number }

/** One served leaf of a row tree: its bytes (the leaf holding the row) and its path. */
export interface ServedRowLeaf { bytes: Uint8Array, siblings: Uint8Array[] }
export interface DatasetServePart {
  v: 1
  /** the two trees' roots (nodeHash(xRoot, yRoot) = dataset_root) and each tensor's column root */
  xRoot: Uint8Array
  yRoot: Uint8Array
  xCols: Uint8Array
  yCols: Uint8Array
  /** global index of the first row in this part (rows served before it) */
  from: number
  rows: Array<{ x: ServedRowLeaf, y: ServedRowLeaf }>
}

/**
 * The 0-based steps (transitions) whose batches a verifier's replay of its
 * required sample reads: for each unit (1-based unit end, requiredSample), the
 * steps from the latest checkpoint at or before the unit's start to its end;
 * and a diverged proof's last step. Sorted, each once: at most
 * challengeReplaySteps of the task.
 */
export function datasetServeSteps (required: readonly number[], stepCount: number, checkpointEvery: number, rootEvery = 1, diverged = false): number[] {
  const out = new Set<number>()
  for (const s of required) {
    const from = rootEvery * Math.floor((s - 1) / rootEvery)
    const cp = checkpointEvery * Math.floor(from / checkpointEvery)
    for (let t = cp; t < Math.min(s, stepCount); t++) out.add(t)
  }
  if (diverged) out.add(stepCount)
  return [...out].sort((a, b) => a - b)
}

/** The dataset row of global serve position `k`: batch position k mod batch of step steps[⌊k / batch⌋]. */
function rowOf (order: DataOrder, f: DatasetFacts, steps: readonly number[], k: number): number {
  return order.batch(steps[Math.floor(k / f.batchSize)])[k % f.batchSize]
}

/** Row trees of the dataset's two tensors, every level kept: a proof per row without rehashing the tree. */
class RowTree {
  readonly levels: Uint8Array[][]
  readonly group: number
  readonly cols: Uint8Array
  readonly root: Uint8Array
  private readonly sliceBytes: number
  private readonly count: number
  constructor (private readonly t: TensorData) {
    const c = commitTensor(t)
    this.cols = c.colRoot
    this.root = c.root
    const l = axisLayout(t.dtype, t.shape, 'row')
    this.group = l.group
    const bytes = new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength)
    const leafBytes = (i: number): Uint8Array => bytes.subarray(i * l.group * l.sliceBytes, Math.min(l.count, (i + 1) * l.group) * l.sliceBytes)
    let level = Array.from({ length: l.leaves }, (_, i) => leafHash(leafBytes(i)))
    this.levels = [level]
    while (level.length > 1) {
      const next: Uint8Array[] = []
      for (let i = 0; i < level.length; i += 2) next.push(nodeHash(level[i], i + 1 < level.length ? level[i + 1] : ZERO_HASH))
      this.levels.push(next)
      level = next
    }
    this.sliceBytes = l.sliceBytes
    this.count = l.count
  }

  leaf (row: number): ServedRowLeaf {
    const leaf = Math.floor(row / this.group)
    const bytes = new Uint8Array(this.t.values.buffer, this.t.values.byteOffset, this.t.values.byteLength)
      .slice(leaf * this.group * this.sliceBytes, Math.min(this.count, (leaf + 1) * this.group) * this.sliceBytes)
    const siblings: Uint8Array[] = []
    let i = leaf
    for (const level of this.levels.slice(0, -1)) {
      siblings.push(level[i ^ 1] ?? ZERO_HASH)
      i >>= 1
    }
    return { bytes, siblings }
  }
}

/**
 * The submitter's side: the dataset's rows (x [trainSize, rowSize] normalised
 * float32, y [trainSize, classes] one-hot float32, what dataset_root commits)
 * and the program's data order; builds the parts serving a challenge's steps.
 */
export class DatasetServer {
  private readonly x: RowTree
  private readonly y: RowTree
  /** `x`, `y`: the rows, or the trees of another server of the same rows (withOrder) */
  constructor (readonly facts: DatasetFacts, x: Float32Array | RowTree, y: Float32Array | RowTree) {
    const tree = (v: Float32Array | RowTree, cols: number): RowTree => {
      if (v instanceof RowTree) return v
      if (v.length !== facts.trainSize * cols) throw new RangeError('dataset rows do not have the program\'s shape')
      return new RowTree({ shape: [facts.trainSize, cols], dtype: 'float32', values: v })
    }
    this.x = tree(x, facts.rowSize)
    this.y = tree(y, facts.classes)
  }

  /** The same rows under another program's data order: shares the rows and their trees (no copy). */
  withOrder (seed: number, batchSize: number): DatasetServer {
    return new DatasetServer({ ...this.facts, seed, batchSize }, this.x, this.y)
  }

  /** dataset_root of these rows */
  get root (): Uint8Array { return datasetRootOf(this.x.root, this.y.root) }

  /** The serve of `steps` (datasetServeSteps) from row `from` on, in parts of at most `maxBytes`. */
  parts (steps: readonly number[], o: { from?: number, maxBytes?: number } = {}): Uint8Array[] {
    const out: Uint8Array[] = []
    for (let k = o.from ?? 0; k < steps.length * this.facts.batchSize;) {
      const p = this.part(steps, k, o.maxBytes)
      out.push(p.bytes)
      k = p.next
    }
    return out
  }

  /** One part of the serve of `steps`, from row `from` (of at most `maxBytes`), and the row after it: a serve built as it is sent. */
  part (steps: readonly number[], from: number, maxBytes = MAX_DATASET_PART_BYTES): { bytes: Uint8Array, next: number } {
    const order = new DataOrder(this.facts.seed, this.facts.trainSize, this.facts.batchSize)
    const total = steps.length * this.facts.batchSize
    const part: DatasetServePart = { v: 1, xRoot: this.x.root, yRoot: this.y.root, xCols: this.x.cols, yCols: this.y.cols, from, rows: [] }
    let bytes = 256
    let k = from
    while (k < total) {
      const row = rowOf(order, this.facts, steps, k)
      const r = { x: this.x.leaf(row), y: this.y.leaf(row) }
      // the bytes, and CBOR's keys and headers (at most 96 bytes a row)
      const size = r.x.bytes.length + r.y.bytes.length + 34 * (r.x.siblings.length + r.y.siblings.length) + 96
      if (part.rows.length > 0 && bytes + size > maxBytes) break
      part.rows.push(r)
      bytes += size
      k++
    }
    return { bytes: encode(part), next: k }
  }
}

/** The chain's view of a serve so far. */
export interface DatasetServeContext { datasetRoot: Uint8Array, facts: DatasetFacts, steps: readonly number[], served: number }

const isBytes = (v: unknown, n?: number): v is Uint8Array => v instanceof Uint8Array && (n === undefined || v.length === n)

function leafOf (v: unknown): ServedRowLeaf {
  const o = v as { bytes?: unknown, siblings?: unknown }
  if (typeof o !== 'object' || o === null || !isBytes(o.bytes) || !Array.isArray(o.siblings) || o.siblings.length > MAX_DEPTH || !o.siblings.every(s => isBytes(s, 32))) reject('InvalidDatasetServe', 'a row leaf is malformed')
  return { bytes: o.bytes, siblings: o.siblings }
}

/** Decodes a part (shape only; checkDatasetServePart checks it). */
export function decodeDatasetServePart (bytes: Uint8Array): DatasetServePart {
  if (bytes.length > MAX_DATASET_PART_BYTES) reject('ResponseTooLarge', `${bytes.length} bytes`)
  let p: Partial<DatasetServePart>
  try { p = decode(bytes) } catch { reject('InvalidDatasetServe', 'not CBOR') }
  if (typeof p !== 'object' || p === null || p.v !== DATASET_SERVE_VERSION) reject('InvalidDatasetServe', 'not a version 1 dataset serve part')
  if (!isBytes(p.xRoot, 32) || !isBytes(p.yRoot, 32) || !isBytes(p.xCols, 32) || !isBytes(p.yCols, 32)) reject('InvalidDatasetServe', 'roots')
  if (typeof p.from !== 'number' || !Number.isInteger(p.from) || p.from < 0 || !Array.isArray(p.rows) || p.rows.length === 0) reject('InvalidDatasetServe', 'from/rows')
  const rows = p.rows.map(r => ({ x: leafOf((r as { x?: unknown }).x), y: leafOf((r as { y?: unknown }).y) }))
  return { v: 1, xRoot: p.xRoot, yRoot: p.yRoot, xCols: p.xCols, yCols: p.yCols, from: p.from, rows }
}

/**
 * Checks the next part of a serve (the chain): it starts at or before the
 * next row not yet served (no gap), and each row is the committed row of its
 * batch position, x and y, against dataset_root. Returns the rows served
 * after it, of `total` (rows it repeats count once), and the bytes of its new
 * rows.
 */
export function checkDatasetServePart (c: DatasetServeContext, bytes: Uint8Array): { served: number, total: number, rowBytes: number } {
  const p = decodeDatasetServePart(bytes)
  const total = c.steps.length * c.facts.batchSize
  if (p.from > c.served) reject('InvalidDatasetServe', `the part starts at row ${p.from}, past the next row ${c.served}`)
  if (p.from + p.rows.length > total) reject('InvalidDatasetServe', 'more rows than the challenge asks')
  if (!bytesEqual(datasetRootOf(p.xRoot, p.yRoot), c.datasetRoot)) reject('DatasetProofInvalid', 'xRoot/yRoot do not open dataset_root')
  const order = new DataOrder(c.facts.seed, c.facts.trainSize, c.facts.batchSize)
  let rowBytes = 0
  p.rows.forEach((r, i) => {
    const row = rowOf(order, c.facts, c.steps, p.from + i)
    const x: SliceProof = { dtype: 'float32', shape: [c.facts.trainSize, c.facts.rowSize], axis: 'row', index: row, bytes: r.x.bytes, siblings: r.x.siblings, otherRoot: p.xCols }
    const y: SliceProof = { dtype: 'float32', shape: [c.facts.trainSize, c.facts.classes], axis: 'row', index: row, bytes: r.y.bytes, siblings: r.y.siblings, otherRoot: p.yCols }
    if (!verifySlice(p.xRoot, x) || !verifySlice(p.yRoot, y)) reject('DatasetProofInvalid', `row ${row} (serve position ${p.from + i})`)
    if (p.from + i >= c.served) rowBytes += r.x.bytes.length + r.y.bytes.length
  })
  return { served: Math.max(c.served, p.from + p.rows.length), total, rowBytes }
}

/**
 * A checked part as the chain records it: only its rows from `served` on (a
 * part repeating rows already in would otherwise put up to 1 MiB in an event
 * per new row). The bytes themselves when nothing is repeated.
 */
export function newRowsOf (bytes: Uint8Array, served: number): Uint8Array {
  const p = decodeDatasetServePart(bytes)
  if (p.from >= served) return bytes
  return encode({ ...p, from: served, rows: p.rows.slice(served - p.from) })
}

/** Bytes of rows a serve of `rows` rows carries at most: each row's x and y leaves whole. */
export function datasetServeBytes (f: DatasetFacts, rows: number): number {
  const leaf = (width: number): number => groupSize(width * 4) * width * 4
  return rows * (leaf(f.rowSize) + leaf(f.classes))
}

/** One replayed step's batch, as served: inputs [batch, rowSize] and labels [batch, classes]. */
export interface ServedBatch { x: Float32Array, y: Float32Array }

/**
 * The verifier's side: the batches of `steps` rebuilt from a complete serve's
 * parts (as the chain emitted them, in order), each row checked as the chain did.
 */
export function servedBatches (c: Omit<DatasetServeContext, 'served'>, parts: readonly Uint8Array[]): Map<number, ServedBatch> {
  const { batchSize: b, rowSize, classes } = c.facts
  const out = new Map<number, ServedBatch>(c.steps.map(s => [s, { x: new Float32Array(b * rowSize), y: new Float32Array(b * classes) }]))
  const order = new DataOrder(c.facts.seed, c.facts.trainSize, b)
  let served = 0
  for (const bytes of parts) {
    served = checkDatasetServePart({ ...c, served }, bytes).served
    const p = decodeDatasetServePart(bytes)
    p.rows.forEach((r, i) => {
      const k = p.from + i
      const row = rowOf(order, c.facts, c.steps, k)
      const batch = out.get(c.steps[Math.floor(k / b)])!
      const pos = k % b
      batch.x.set(rowValues(r.x.bytes, row, rowSize), pos * rowSize)
      batch.y.set(rowValues(r.y.bytes, row, classes), pos * classes)
    })
  }
  if (served !== c.steps.length * b) throw new RangeError(`the serve is incomplete: ${served} of ${c.steps.length * b} rows`)
  return out
}

/** The float32 values of row `row` in the leaf holding it. */
function rowValues (leaf: Uint8Array, row: number, width: number): Float32Array {
  const at = (row % groupSize(width * 4)) * width * 4
  return valuesFromBytes('float32', leaf.subarray(at, at + width * 4)) as Float32Array
}
