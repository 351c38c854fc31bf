import { parentPort } from 'node:worker_threads'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { fastStateRoot } from './fast-commit.js'

// Worker side of StateHasher: computes state roots off the training thread.
parentPort?.on('message', (m: { id: number, step: number, tensors: TensorData[] }) => {
  try {
    const root = fastStateRoot(m.tensors, m.step)
    parentPort?.postMessage({ id: m.id, root })
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: (e as Error).message })
  }
})
