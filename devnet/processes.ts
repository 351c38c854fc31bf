import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join, resolve } from 'node:path'

// Child processes of the devnet: each runs the compiled CLI with its own data
// dir; stdout is parsed for the ready line, stderr goes to a log file.

const here = dirname(fileURLToPath(import.meta.url))
export const CLI_JS = resolve(here, '../node/cli/main.js')

export interface ChildHandle {
  name: string
  child: ChildProcess
  ready: Promise<any> // eslint-disable-line @typescript-eslint/no-explicit-any -- the first JSON object a child prints; each caller knows its shape
  exited: Promise<number | null>
  logFile: string
}

export function spawnCli (name: string, args: string[], logDir: string): ChildHandle {
  const logFile = join(logDir, `${name}.log`)
  const log = createWriteStream(logFile, { flags: 'a' })
  const child = spawn(process.execPath, [CLI_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: process.env.PROOFSWARM_LOG_LEVEL ?? 'info' } })
  child.stderr!.pipe(log)
  let out = ''
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  const ready = new Promise<ChildHandle['ready'] extends Promise<infer T> ? T : never>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const v = tryJson(out)
      if (v !== undefined) resolve(v)
    })
    void exited.then(code => reject(new Error(`${name} exited (code ${code}) before it was ready; see ${logFile}`)))
  })
  ready.catch(() => {})
  return { name, child, ready, exited, logFile }
}

function tryJson (s: string): unknown {
  const start = s.indexOf('{')
  if (start < 0) return undefined
  let depth = 0
  for (let i = start; i < s.length; i++) {
    if (s[i] === '{') depth++
    else if (s[i] === '}' && --depth === 0) {
      try { return JSON.parse(s.slice(start, i + 1)) } catch { return undefined }
    }
  }
  return undefined
}

export async function stopChild (h: ChildHandle, timeoutMs = 10_000): Promise<void> {
  if (h.child.exitCode != null || h.child.signalCode != null) return
  h.child.kill('SIGTERM')
  const t = setTimeout(() => h.child.kill('SIGKILL'), timeoutMs)
  await h.exited
  clearTimeout(t)
}
