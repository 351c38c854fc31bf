import { parentPort } from 'node:worker_threads'
import { toHex } from '../../protocols/commit/merkle.js'
import { codeCheckpoint } from './coded-run.js'
import type { CodingJob, CodingReply } from './coding-pool.js'

// Worker side of CodingPool: one checkpoint's Reed–Solomon coding, chunk
// leaves and block CIDs per message, off the peer's event loop.
parentPort!.on('message', (j: CodingJob) => {
  let reply: CodingReply
  try {
    const c = codeCheckpoint(j.dir, j.step)
    reply = { id: j.id, step: c.step, dataBytes: c.dataBytes, chunkRoot: toHex(c.chunkRoot) }
  } catch (e) {
    reply = { id: j.id, error: (e as Error).message }
  }
  parentPort!.postMessage(reply)
})
