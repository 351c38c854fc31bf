import { pino, type Logger, type LevelWithSilent } from 'pino'

export type { Logger }

export interface LoggerOptions {
  level?: string
  /** force pretty (true) or JSON lines (false); default: pretty on a TTY */
  pretty?: boolean
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])

export function parseLevel (level: string | undefined): LevelWithSilent {
  const l = (level ?? process.env.PROOFSWARM_LOG_LEVEL ?? 'info').toLowerCase()
  if (!LEVELS.has(l)) throw new Error(`invalid log level "${level}": use one of ${[...LEVELS].join(', ')}`)
  return l as LevelWithSilent
}

// Logs go to stderr so stdout stays clean for --json output and printed addresses.
export function createLogger (name: string, opts: LoggerOptions = {}): Logger {
  const level = parseLevel(opts.level)
  const pretty = opts.pretty ?? process.stderr.isTTY === true
  if (pretty) {
    return pino({
      name,
      level,
      transport: { target: 'pino-pretty', options: { destination: 2, colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } }
    })
  }
  return pino({ name, level }, pino.destination({ dest: 2, sync: true }))
}
