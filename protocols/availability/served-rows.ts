import { decode, encode } from 'cborg'
import type { SliceProof } from '../commit/tensor.js'
import { DataOrder } from '../data/order.js'
import { checkDatasetServePart, decodeDatasetServePart, servedBatches, type DatasetFacts, type ServedBatch } from './dataset-serve.js'

// A verifier's copy of the rows a submitter served on chain for its dataset
// challenge (dataset-serve.ts), as its engine replays from them: the task's
// dataset_root, the data order's facts, the challenged steps and the parts in
// the order the chain took them. The engine checks every row again against
// dataset_root before it builds a batch from it, and a dispute's data claim
// opens a row with the leaf and path the serve carried.
//
// Pure: the verifier's node writes it, the engine reads it.

export const SERVED_ROWS_VERSION = 1

export interface ServedRows {
  v: 1
  datasetRoot: Uint8Array
  facts: DatasetFacts
  /** 0-based steps whose batches were served */
  steps: number[]
  parts: Uint8Array[]
}

export function encodeServedRows (s: Omit<ServedRows, 'v'>): Uint8Array {
  return encode({ v: SERVED_ROWS_VERSION, datasetRoot: s.datasetRoot, facts: s.facts, steps: s.steps, parts: s.parts })
}

export function decodeServedRows (bytes: Uint8Array): ServedRows {
  const s = decode(bytes) as Partial<ServedRows>
  const f = s.facts as Partial<DatasetFacts> | undefined
  const nat = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0
  if (typeof s !== 'object' || s === null || s.v !== SERVED_ROWS_VERSION || !(s.datasetRoot instanceof Uint8Array) ||
    f == null || ![f.seed, f.trainSize, f.batchSize, f.rowSize, f.classes].every(nat) ||
    !Array.isArray(s.steps) || !s.steps.every(nat) || !Array.isArray(s.parts) || !s.parts.every(p => p instanceof Uint8Array)) {
    throw new RangeError('not a version 1 served-rows file')
  }
  return { v: 1, datasetRoot: s.datasetRoot, facts: f as DatasetFacts, steps: s.steps, parts: s.parts }
}

/** The batches of the served steps, every row checked against dataset_root (servedBatches). */
export function servedRowBatches (s: ServedRows): Map<number, ServedBatch> {
  return servedBatches({ datasetRoot: s.datasetRoot, facts: s.facts, steps: s.steps }, s.parts)
}

/** What a challenger's data claim opens: the two trees' roots and each served row's slice proofs. */
export interface ServedRowProofs { xRoot: Uint8Array, yRoot: Uint8Array, rows: Map<number, { x: SliceProof, y: SliceProof }> }

/** The slice proofs of every served row (by dataset row), each part checked against dataset_root first. */
export function servedRowProofs (s: ServedRows): ServedRowProofs {
  const { facts: f } = s
  const order = new DataOrder(f.seed, f.trainSize, f.batchSize)
  const rows = new Map<number, { x: SliceProof, y: SliceProof }>()
  let roots: { xRoot: Uint8Array, yRoot: Uint8Array } | undefined
  let served = 0
  for (const bytes of s.parts) {
    served = checkDatasetServePart({ datasetRoot: s.datasetRoot, facts: f, steps: s.steps, served }, bytes).served
    const p = decodeDatasetServePart(bytes)
    roots ??= { xRoot: p.xRoot, yRoot: p.yRoot }
    p.rows.forEach((r, i) => {
      const k = p.from + i
      const row = order.batch(s.steps[Math.floor(k / f.batchSize)])[k % f.batchSize]
      rows.set(row, {
        x: { dtype: 'float32', shape: [f.trainSize, f.rowSize], axis: 'row', index: row, bytes: r.x.bytes, siblings: r.x.siblings, otherRoot: p.xCols },
        y: { dtype: 'float32', shape: [f.trainSize, f.classes], axis: 'row', index: row, bytes: r.y.bytes, siblings: r.y.siblings, otherRoot: p.yCols }
      })
    })
  }
  if (roots === undefined || served !== s.steps.length * f.batchSize) throw new RangeError(`the serve is incomplete: ${served} of ${s.steps.length * f.batchSize} rows`)
  return { ...roots, rows }
}
