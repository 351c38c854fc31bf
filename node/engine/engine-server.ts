#!/usr/bin/env node
import '../polyfill.js'
import { installProcessPolicy } from '../process-policy.js'
import { runJob } from './jobs.js'
import { parseRequest } from './protocol-check.js'
import type { EngineMessage, EngineRequest } from './protocol.js'

// An engine process (engine.ts starts it over IPC): it runs the jobs of
// protocol.ts one at a time, in arrival order, and answers each with its
// events and then its result or error. A verifier keeps one alive between
// tasks (warm-engine.ts) so the backend and the dataset stay loaded; a
// training, tape, evaluation or commitments job gets a process of its own.
// The process exits when its parent goes away or closes the channel, or after
// an idle period, giving its memory back. It writes nothing on stdout.

const IDLE_MS = Number(process.env.PROOFSWARM_ENGINE_IDLE_MS ?? 300_000)
let idle: NodeJS.Timeout | undefined
let queue: Promise<void> = Promise.resolve()

function armIdle (): void {
  if (idle !== undefined) clearTimeout(idle)
  idle = setTimeout(() => process.exit(0), IDLE_MS)
}

const send = (m: EngineMessage): void => { if (process.connected) process.send?.(m) }

async function serve (raw: unknown): Promise<void> {
  let req: EngineRequest
  try {
    req = parseRequest(raw)
  } catch (e) {
    // a request that cannot be read is answered (under its id when it has one) and the engine goes on serving
    const id = (raw as { id?: unknown } | null)?.id
    send({ type: 'error', id: typeof id === 'number' && Number.isSafeInteger(id) ? id : -1, message: (e as Error).message })
    return
  }
  try {
    const result = await runJob(req, e => send({ ...e, id: req.id }))
    send({ type: 'done', id: req.id, kind: req.kind, result })
  } catch (e) {
    send({ type: 'error', id: req.id, message: (e as Error).message })
  }
}

// a stray rejection is logged on stderr and the engine goes on serving; an uncaught exception ends it (node/process-policy.ts)
installProcessPolicy('engine')

if (process.send === undefined) {
  process.stderr.write('engine-server runs as a child of a peer (with an IPC channel)\n')
  process.exit(1)
}
process.on('disconnect', () => process.exit(0))
process.on('message', (m: unknown) => {
  armIdle()
  queue = queue.then(async () => {
    if (idle !== undefined) clearTimeout(idle)
    await serve(m)
    armIdle()
  })
})
armIdle()
send({ type: 'ready' })
