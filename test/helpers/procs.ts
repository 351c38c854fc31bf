import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

// Starts proofswarm CLI processes from the compiled tree (npm test builds
// first) and cleans them up. Every wait is bounded.

export const CLI = resolve('dist/node/cli/main.js')

export interface Proc {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

const running = new Set<ChildProcess>()

export function startCli (args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  running.add(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => { running.delete(child); resolve(code) }))
  return { child, stdout: () => out, stderr: () => err, exited }
}

/** Runs a CLI command to completion (bounded), returning its output and exit code. */
export async function runCli (args: string[], timeoutMs = 30_000): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const p = startCli(args)
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs)
  const code = await p.exited
  clearTimeout(timer)
  return { code, stdout: p.stdout(), stderr: p.stderr() }
}

/** `proofswarm ...args` to completion, each run bounded by `timeoutMs`: for tests that run many commands and check exit codes. */
export function cliRunner (timeoutMs: number): (...args: string[]) => Promise<{ code: number | null, stdout: string, stderr: string }> {
  return async (...args) => await runCli(args, timeoutMs)
}

/** Throws unless the compiled CLI exists (npm test builds first). */
export function assertBuilt (): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: run npm run build`)
}

/** `proofswarm <args> --json`: its parsed JSON, or an error with the tail of its stderr. */
export async function runCliJson (args: string[], timeoutMs = 30_000): Promise<any> {
  const r = await runCli([...args, '--json'], timeoutMs)
  if (r.code !== 0) throw new Error(`proofswarm ${args.join(' ')} failed (${r.code}): ${r.stderr.slice(-2000)}`)
  return JSON.parse(r.stdout)
}

/** Waits until `pred` holds for the process's stdout, or throws with its logs. */
export async function waitForOutput (p: Proc, pred: (stdout: string) => boolean, timeoutMs = 20_000, what = 'output'): Promise<string> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (pred(p.stdout())) return p.stdout()
    if (p.child.exitCode != null) break
    await sleep(50)
  }
  throw new Error(`timed out waiting for ${what}; exit=${p.child.exitCode}\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr().slice(-3000)}`)
}

/** Parses the first JSON document printed on stdout (multi-line pretty JSON). */
export function firstJson<T = any> (stdout: string): T {
  const start = stdout.indexOf('{')
  let depth = 0
  for (let i = start; i < stdout.length; i++) {
    if (stdout[i] === '{') depth++
    else if (stdout[i] === '}' && --depth === 0) return JSON.parse(stdout.slice(start, i + 1)) as T
  }
  throw new Error('no complete JSON object on stdout yet')
}

export function hasJson (stdout: string): boolean {
  try { firstJson(stdout); return true } catch { return false }
}

export async function waitFor<T> (fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const v = await fn()
      if (v !== undefined && v !== false) return v
    } catch (err) { last = err }
    await sleep(intervalMs)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last != null ? `: ${(last as Error).message}` : ''}`)
}

export async function stopProc (p: Proc, timeoutMs = 10_000): Promise<number | null> {
  if (p.child.exitCode != null) return p.child.exitCode
  p.child.kill('SIGTERM')
  const t = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs)
  const code = await p.exited
  clearTimeout(t)
  return code
}

export function killAll (): void {
  for (const c of running) c.kill('SIGKILL')
  running.clear()
}

export async function tempDir (prefix = 'proofswarm-'): Promise<{ path: string, cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix))
  return { path, cleanup: async () => await rm(path, { recursive: true, force: true }) }
}

export const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
