import { parentPort } from 'node:worker_threads'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { fastStateRoot } from './fast-commit.js'

// Worker side of StateHasher: computes state roots off the training thread.
parentPort?.on('message', (m: { id: number, step: number, tensors: TensorData[] }) => {
  try {
    const root = fastStateRoot(m.tensors, m.step)
    // hand the buffers back: freed by the main thread's GC instead of piling up
    // as external memory in this small-heap worker
    const buffers = m.tensors.map(t => t.values.buffer as ArrayBuffer)
    parentPort?.postMessage({ id: m.id, root, buffers }, buffers)
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: (e as Error).message })
  }
})
