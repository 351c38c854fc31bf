import { parseInteger } from './options.js'
import { CliError } from './errors.js'
import { createLogger } from '../log.js'
import type { BackendLog } from '../train/backend.js'
import type { JobEvent } from '../engine/protocol.js'
import type { Progress } from '../train/run.js'

// Small helpers shared by the training CLI commands.

/** parseInteger for an option commander left as a string (undefined stays undefined). */
export function intOpt (v: string | undefined, name: string, min: number, max: number): number | undefined {
  return v === undefined ? undefined : parseInteger(v, name, min, max)
}

export function numOpt (v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  if (v.trim() === '' || !Number.isFinite(n)) throw new CliError(`${name} must be a number, got "${v}"`)
  return n
}

export function cliLog (name: string, level?: string): BackendLog {
  const l = createLogger(name, { level })
  return { info: (m: string) => l.info(m), warn: (m: string) => l.warn(m) }
}

/** stderr progress line: rewritten in place on a TTY, one line every few seconds otherwise. */
export function progressPrinter (): (p: Progress) => void {
  const tty = process.stderr.isTTY === true
  let last = 0
  return p => {
    const now = Date.now()
    const done = p.step === p.steps
    if (!tty && !done && now - last < 3000) return
    last = now
    const eta = Number.isFinite(p.etaSec) ? `${Math.round(p.etaSec)}s` : '?'
    const pct = Math.floor(100 * p.step / p.steps)
    const bar = tty ? '[' + '#'.repeat(Math.floor(pct / 5)).padEnd(20, '.') + '] ' : ''
    const line = `${bar}step ${p.step}/${p.steps} (${pct}%)  loss ${p.loss.toFixed(4)}  ${Math.round(p.samplesPerSec)} samples/s  ETA ${eta}`
    process.stderr.write(tty ? `\r${line}${done ? '\n' : ''}` : `${line}\n`)
  }
}

/** Prints an engine job's events: its progress line and its log lines (a checkpoint written says nothing here). */
export function cliEvents (log: BackendLog): (e: JobEvent) => void {
  const progress = progressPrinter()
  return e => {
    if (e.type === 'progress') progress(e)
    else if (e.type === 'log') log[e.level](e.message)
  }
}

export function wrapError (e: unknown): never {
  if (e instanceof CliError) throw e
  throw new CliError((e as Error)?.message ?? String(e))
}
