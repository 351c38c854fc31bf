import { parentPort } from 'node:worker_threads'
import { waitReady } from '@polkadot/wasm-crypto'
import { verifySignature, type SignatureJob } from './runtime/signature.js'

// Worker thread of the verify pool: checks batches of extrinsic signatures.
// Messages in: { id, jobs: SignatureJob[] }; out: { id, ok: Uint8Array } (1 = valid).

await waitReady()
parentPort?.on('message', (m: { id: number, jobs: SignatureJob[] }) => {
  const ok = new Uint8Array(m.jobs.length)
  m.jobs.forEach((j, i) => { ok[i] = verifySignature(j) ? 1 : 0 })
  parentPort?.postMessage({ id: m.id, ok }, [ok.buffer])
})
parentPort?.postMessage({ ready: true })
