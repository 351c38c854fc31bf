import { workerData, type MessagePort } from 'node:worker_threads'
import { runHashJob, type HashJob, type HashResult } from './hash-job.js'

// Worker side of StateHasher: state roots and checkpoint writes off the
// training thread. Replies go through the dedicated port the trainer polls.
const port = (workerData as { port: MessagePort }).port
port.on('message', (m: HashJob) => {
  // hand the buffers back: recycled by the training loop instead of piling up
  // as external memory in this small-heap worker
  const views = m.tensors.map(t => t.values)
  const buffers = [...new Set(views.map(v => v.buffer as ArrayBuffer))]
  let reply: HashResult
  try {
    const r = runHashJob(m)
    reply = { id: m.id, root: new Uint8Array(r.root), manifestHash: r.manifestHash, views }
  } catch (e) {
    reply = { id: m.id, error: (e as Error).message, views }
  }
  port.postMessage(reply, buffers)
})
