import { workerData, type MessagePort } from 'node:worker_threads'
import { runHashJob, type HashJob, type HashResult } from './hash-job.js'

// Worker side of StateHasher: state roots and checkpoint writes off the
// training thread. Replies go through the dedicated port the trainer polls.
const port = (workerData as { port: MessagePort }).port
port.on('message', (m: HashJob) => {
  // the tensors are views of a state slot shared with the training thread: it
  // refills the slot once this reply arrives, so nothing is kept or handed back
  let reply: HashResult
  try {
    const r = runHashJob(m)
    reply = { id: m.id, root: new Uint8Array(r.root), manifestHash: r.manifestHash }
  } catch (e) {
    reply = { id: m.id, error: (e as Error).message }
  }
  port.postMessage(reply)
})
