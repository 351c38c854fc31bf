import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeServedRows, servedRowBatches, servedRowProofs, type ServedBatch, type ServedRowProofs, type ServedRows } from '../../protocols/availability/index.js'
import type { DatasetRef } from '../../protocols/program/program.js'
import { inputRows, labelRows, type Dataset } from './dataset.js'

// Where a step's batch bytes come from. Training and most replays read them
// from the dataset's files; a verifier whose submitter withheld a custom
// dataset replays from the rows the submitter served on chain for its dataset
// challenge (protocols/availability/served-rows.ts), which its node writes
// into the run directory as SERVED_ROWS_FILE. Either way a batch is the same
// float32 bytes: the served rows are the committed rows, and dataset_root
// commits exactly what inputRows and labelRows build from the files.

/** The batch of 0-based step `step`, whose dataset rows (the data order's) are `rows`. */
export interface BatchSource { batch: (step: number, rows: Uint32Array) => { x: Float32Array, y: Float32Array } }

/** A dataset's own rows. */
export function datasetBatches (ds: Dataset): BatchSource {
  return { batch: (_step, rows) => ({ x: inputRows(ds, rows), y: labelRows(ds, rows) }) }
}

/** The served batches; a step that was not served has no batch here (the replay cannot run it). */
export function servedBatchSource (batches: ReadonlyMap<number, ServedBatch>): BatchSource {
  return {
    batch: step => {
      const b = batches.get(step)
      if (b === undefined) throw new Error(`the batch of step ${step} was not served on chain: only the steps of the challenged sample can be replayed`)
      // copies: a caller may keep or change what it gets
      return { x: b.x.slice(), y: b.y.slice() }
    }
  }
}

/** The served rows a run directory holds for its replays and disputes. */
export const SERVED_ROWS_FILE = 'served-rows.cbor'

export interface ServedRun {
  /** the dataset's shape and hash as the program states them, without rows (they are the source's) */
  ds: Dataset
  batches: BatchSource
  rows: ServedRows
  /** the slice proofs of the served rows (a challenger's data claim), built on first use */
  proofs: () => ServedRowProofs
}

/** The served rows in `dir` for a program's dataset (checked against its facts and dataset_root), or undefined when there are none. */
export function servedRunIn (dir: string, ref: DatasetRef, program: { seed: number, batchSize: number }): ServedRun | undefined {
  const file = join(dir, SERVED_ROWS_FILE)
  if (!existsSync(file)) return undefined
  const rows = decodeServedRows(readFileSync(file))
  const f = rows.facts
  if (f.seed !== program.seed || f.batchSize !== program.batchSize || f.trainSize !== ref.trainSize || f.rowSize !== ref.rowSize || f.classes !== ref.classes) {
    throw new Error(`${file} serves another data order or shape than the program's dataset`)
  }
  const batches = servedBatchSource(servedRowBatches(rows))
  const empty = new Uint8Array(0)
  const ds: Dataset = {
    name: ref.name, kind: 'idx', rowSize: ref.rowSize, classes: ref.classes, trainSize: ref.trainSize, testSize: 0,
    trainImages: empty, trainLabels: empty, testImages: empty, testLabels: empty, sha256: ref.sha256
  }
  let proofs: ServedRowProofs | undefined
  return { ds, batches, rows, proofs: () => (proofs ??= servedRowProofs(rows)) }
}
