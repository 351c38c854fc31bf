import { DatasetServer, type DatasetFacts } from '../../protocols/availability/index.js'
import { taskProgram } from './program.js'

// A task on a custom IDX dataset for the withheld-dataset tests: its rows
// (normalised as the engine does, x/255, and one-hot labels), the
// submitter's server of them (whose root is the task's dataset_root), and the
// program (10 steps, checkpoints every 5, batches of 16 of 256 rows).

const TRAIN = 256
export const DATASET_FACTS: DatasetFacts = { seed: 1, trainSize: TRAIN, batchSize: 16, rowSize: 784, classes: 10 }

function customRows (): { x: Float32Array, y: Float32Array } {
  const x = new Float32Array(TRAIN * 784)
  const y = new Float32Array(TRAIN * 10)
  let s = 12345
  for (let i = 0; i < x.length; i++) { s = (s * 1103515245 + 12345) >>> 0; x[i] = (s >>> 24) / 255 }
  for (let r = 0; r < TRAIN; r++) y[r * 10 + (r * 7) % 10] = 1
  return { x, y }
}

export const DATASET_ROWS = customRows()
export const DATASET_SERVER = new DatasetServer(DATASET_FACTS, DATASET_ROWS.x, DATASET_ROWS.y)
export const CUSTOM_PROGRAM = taskProgram({
  steps: 10, checkpointEvery: 5, seed: DATASET_FACTS.seed, batchSize: DATASET_FACTS.batchSize,
  dataset: { kind: 'idx', name: 'custom-idx', sha256: 'ef'.repeat(32), trainSize: TRAIN, testSize: 0, rowSize: 784, classes: 10 }
})
