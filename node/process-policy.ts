import { writeSync } from 'node:fs'
import type { Logger } from './log.js'

// What a node process (every `proofswarm` command, the engine processes) does
// with an error nobody handled (docs/operators-guide.md, "Stray errors").
//
// An unhandled promise rejection is an async operation whose failure nobody
// awaited: it has already ended, and the code that started it does not
// depend on its outcome. Its usual cause is I/O failing (a chain query as the
// WebSocket drops, a libp2p stream reset), which a remote party can provoke
// at will: exiting on it (Node's default) would let anyone who can drop a
// peer's connection at the right moment stop an honest solver or verifier,
// which then misses its deadlines and is slashed. It is logged, counted
// (proofswarm_unhandled_rejections_total, `proofswarm status`) and the
// process goes on.
//
// An uncaught exception stopped our code part-way through an event handler,
// timer or callback, leaving whatever it was updating half-done: the process
// writes one clear line and exits with code 1, and a restart resumes from
// what is on disk (a solver from its last checkpoint).

export interface StrayRejections {
  count: number
  /** the last one's message and when (ISO time) */
  last?: { message: string, at: string }
}

let installed = false
let log: Logger | undefined
let name = 'proofswarm'
const stats: StrayRejections = { count: 0 }

function describe (reason: unknown): string {
  if (reason instanceof Error) return reason.stack ?? `${reason.name}: ${reason.message}`
  try { return typeof reason === 'string' ? reason : JSON.stringify(reason) ?? String(reason) } catch { return String(reason) }
}

function firstLine (reason: unknown): string {
  return (reason instanceof Error ? `${reason.name}: ${reason.message}` : describe(reason)).split('\n')[0].slice(0, 300)
}

/** Installs the policy once per process; `processName` names the process in the messages. */
export function installProcessPolicy (processName: string): void {
  name = processName
  if (installed) return
  installed = true
  process.on('unhandledRejection', (reason: unknown) => {
    stats.count++
    stats.last = { message: firstLine(reason), at: new Date().toISOString() }
    const msg = `unhandled promise rejection #${stats.count} (an async operation failed and nothing awaited it; ${name} keeps running)`
    if (log != null) log.error({ err: reason instanceof Error ? reason : describe(reason), unhandledRejections: stats.count }, msg)
    else writeLine(`${name}: warning: ${msg}: ${describe(reason)}`)
  })
  process.on('uncaughtException', (err: Error, origin: string) => {
    // synchronous: the line must be out before the process ends
    writeLine(`${name}: fatal: ${origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception'}, exiting with code 1 (a bug: please report it with this trace): ${describe(err)}`)
    process.exit(1)
  })
}

/** Where the policy logs unhandled rejections from now on (the peer's logger once it has one). */
export function setProcessLog (logger: Logger | undefined): void { log = logger }

/** Unhandled rejections this process has seen (logged, not fatal). */
export function strayRejections (): StrayRejections {
  return { count: stats.count, ...(stats.last != null ? { last: { ...stats.last } } : {}) }
}

function writeLine (line: string): void {
  try { writeSync(2, line + '\n') } catch {}
}
