// Process handling for the swarm scale bench: peers started through the real
// CLI (`proofswarm bootstrap` / `join`), each a separate process, read only
// through what an operator has (control API, /proc). Every process started
// here is killed on exit, on SIGINT/SIGTERM and on an uncaught error.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

// e.g. SCALE_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile every peer
const NODE_ARGS = (process.env.SCALE_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)

export const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

const live = new Set<ChildProcess>()
const dirs = new Set<string>()
/** a directory removed on exit, however the bench ends */
export function tempDirToRemove (dir: string): string { dirs.add(dir); return dir }
function killAll (): void {
  for (const c of live) { try { c.kill('SIGKILL') } catch {} }
  live.clear()
  for (const d of dirs) { try { rmSync(d, { recursive: true, force: true }) } catch {} }
}
process.on('exit', killAll)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => { killAll(); process.exit(130) })
process.on('uncaughtException', err => { console.error(err); killAll(); process.exit(1) })

/** a peer's control API: method, path, JSON body → JSON reply */
export type ControlApi = (method: string, path: string, body?: unknown, timeoutMs?: number) => Promise<any>

export class SwarmProc {
  readonly dataDir: string
  readonly t0: number
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  readonly ready: Promise<any>
  api!: ControlApi
  /** the latest /v1/status read by meshMins */
  status?: any

  constructor (cli: string, args: string[], dataDir: string) {
    this.dataDir = dataDir
    this.t0 = performance.now()
    this.child = spawn(process.execPath, [...NODE_ARGS, cli, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'warn' } })
    live.add(this.child)
    this.exited = new Promise(resolve => this.child.on('exit', code => { live.delete(this.child); resolve(code) }))
    let out = ''
    let err = ''
    this.child.stderr?.on('data', (d: Buffer) => { err = (err + d).slice(-2000) })
    this.ready = new Promise((resolve, reject) => {
      this.child.stdout?.on('data', (d: Buffer) => {
        out += d
        try { resolve(JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1))) } catch {}
      })
      this.child.on('exit', code => reject(new Error(`${args[0]} ${dataDir} exited ${code}: ${err}`)))
    })
    this.ready.catch(() => {})
    this.ready.then(() => { this.api = client(dataDir) }, () => {})
  }

  get pid (): number | undefined { return this.child.pid }
  get alive (): boolean { return this.child.exitCode == null && this.child.signalCode == null }

  /** SIGTERM (clean stop) or SIGKILL (crash); resolves when the process is gone (bounded: 12 s, then SIGKILL) */
  async stop (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.alive) return
    this.child.kill(signal)
    const t = setTimeout(() => this.child.kill('SIGKILL'), 12_000)
    await this.exited
    clearTimeout(t)
  }
}

function client (dataDir: string): ControlApi {
  const info = JSON.parse(readFileSync(join(dataDir, 'control.json'), 'utf8'))
  const token = readFileSync(join(dataDir, 'control.token'), 'utf8').trim()
  return async (method, path, body, timeoutMs = 30_000) => {
    const r = await fetch(`http://127.0.0.1:${info.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(timeoutMs)
    })
    const j = await r.json()
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j)}`)
    return j
  }
}

/** CPU time (user + system) of a process in ms: barely depends on what else the shared machine runs */
export function cpuMs (pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, in ticks of 10 ms
  } catch { return NaN }
}

export function rssMiB (pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : NaN
  } catch { return NaN }
}

export function memAvailableMiB (): number {
  const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** runs fn over items with at most `limit` at a time */
export async function pool<T, R> (items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) { const i = next++; out[i] = await fn(items[i], i) }
  }))
  return out
}

/**
 * Mesh state of each peer from its status: the smallest mesh over the topics
 * it subscribes to (NaN when the status could not be read).
 */
export async function meshMins (peers: SwarmProc[]): Promise<number[]> {
  return await pool(peers, 25, async p => {
    try {
      const s = await p.api('GET', '/v1/status', undefined, 10_000)
      p.status = s
      return s.topics.length === 0 ? 0 : Math.min(...s.topics.map((t: { meshPeers: number }) => t.meshPeers))
    } catch { return NaN }
  })
}
