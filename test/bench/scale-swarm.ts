// Process handling for the swarm scale bench: peers started through the real
// CLI (`proofswarm bootstrap` / `join`), each a separate process, or several
// to a process (scale-host.ts, the same node code); read only through what an
// operator has (control API, /proc). Every process started here is killed on
// exit, on SIGINT/SIGTERM and on an uncaught error.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { nativeScriptArgs } from './ts-script.js'

// e.g. SCALE_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile every peer
const NODE_ARGS = nodeArgs(process.env.SCALE_BENCH_NODE_ARGS)
export function nodeArgs (s: string | undefined): string[] { return (s ?? '').split(' ').filter(Boolean) }

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

/** One peer of the swarm, whether it has a process of its own or shares one. */
export interface SwarmPeer {
  readonly dataDir: string
  /** when the bench asked for it (performance.now() of the bench) */
  readonly t0: number
  readonly ready: Promise<any>
  api: ControlApi
  status?: any
  readonly pid: number | undefined
  readonly alive: boolean
  /** peers in its process: the process's CPU time and RSS are divided among them */
  readonly share: number
  /** its process's clock (performance.now()) when it started: status milestones count from process start */
  readonly offsetMs: number
  stop: (signal?: NodeJS.Signals) => Promise<void>
}

export class SwarmProc implements SwarmPeer {
  readonly share = 1
  readonly offsetMs = 0
  readonly dataDir: string
  readonly t0: number
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  readonly ready: Promise<any>
  api!: ControlApi
  /** the latest /v1/status read by meshMins */
  status?: any

  /** variant: which side of a side-by-side run (scale.bench.ts, SCALE_BENCH_B_*) it is */
  constructor (cli: string, args: string[], dataDir: string, nodeArgs = NODE_ARGS, readonly variant = 'A') {
    this.dataDir = dataDir
    this.t0 = performance.now()
    this.child = spawn(process.execPath, [...nodeArgs, cli, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'warn' } })
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

const HOST_SCRIPT = join(fileURLToPath(new URL('.', import.meta.url)), 'scale-host.ts')

/** A process running several peers (scale-host.ts); they stop together, with the process. */
export class PeerHost {
  readonly child: ChildProcess
  readonly exited: Promise<number | null>
  /** the process's RSS before any peer started */
  readonly hello: Promise<{ rssMiB: number }>
  readonly peers: HostedPeer[] = []
  private readonly waiting = new Map<string, (r: { ready?: any, error?: string, startedAtMs?: number }) => void>()

  static async spawn (): Promise<PeerHost> {
    return new PeerHost(await nativeScriptArgs(HOST_SCRIPT, [], NODE_ARGS))
  }

  private constructor (args: string[]) {
    this.child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PROOFSWARM_LOG_LEVEL: 'warn' } })
    live.add(this.child)
    this.exited = new Promise(resolve => this.child.on('exit', code => { live.delete(this.child); resolve(code) }))
    let err = ''
    this.child.stderr?.on('data', (d: Buffer) => { err = (err + d).slice(-2000) })
    let hello: (h: { rssMiB: number }) => void = () => {}
    this.hello = new Promise((resolve, reject) => { hello = resolve; this.child.on('exit', code => reject(new Error(`peer host exited ${code}: ${err}`))) })
    this.hello.catch(() => {})
    this.child.on('exit', code => { for (const w of this.waiting.values()) w({ error: `peer host exited ${code}: ${err}` }) })
    createInterface({ input: this.child.stdout! }).on('line', line => {
      let m: any
      try { m = JSON.parse(line) } catch { return }
      if (m.hello != null) hello(m.hello)
      else if (typeof m.dataDir === 'string') { this.waiting.get(m.dataDir)?.(m); this.waiting.delete(m.dataDir) }
    })
  }

  get pid (): number | undefined { return this.child.pid }
  get alive (): boolean { return this.child.exitCode == null && this.child.signalCode == null }

  start (dataDir: string, bootstrap: string): HostedPeer {
    const reply = new Promise<{ ready?: any, error?: string, startedAtMs?: number }>(resolve => this.waiting.set(dataDir, resolve))
    this.child.stdin?.write(JSON.stringify({ op: 'start', dataDir, bootstrap }) + '\n')
    const p = new HostedPeer(this, dataDir, reply)
    this.peers.push(p)
    return p
  }

  /** SIGTERM: every peer stops cleanly (bounded: 20 s, then SIGKILL) */
  async stop (): Promise<void> {
    if (!this.alive) return
    this.child.kill('SIGTERM')
    const t = setTimeout(() => this.child.kill('SIGKILL'), 20_000)
    await this.exited
    clearTimeout(t)
  }
}

export class HostedPeer implements SwarmPeer {
  readonly t0 = performance.now()
  readonly ready: Promise<any>
  api!: ControlApi
  status?: any
  offsetMs = 0
  private failed = false

  constructor (readonly host: PeerHost, readonly dataDir: string, reply: Promise<{ ready?: any, error?: string, startedAtMs?: number }>) {
    this.ready = reply.then(r => {
      if (r.error != null) { this.failed = true; throw new Error(`hosted peer ${dataDir}: ${r.error}`) }
      this.offsetMs = r.startedAtMs ?? 0
      this.api = client(dataDir)
      return r.ready
    })
    this.ready.catch(() => {})
  }

  get pid (): number | undefined { return this.host.pid }
  get alive (): boolean { return this.host.alive && !this.failed }
  get share (): number { return this.host.peers.length }
  async stop (): Promise<void> { await this.host.stop() }
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

/** read and write syscalls a process has made (/proc/<pid>/io): a count of the frames it moved, independent of the machine's load */
export function syscalls (pid: number | undefined): { reads: number, writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8')
    return { reads: Number(/syscr:\s+(\d+)/.exec(io)?.[1] ?? NaN), writes: Number(/syscw:\s+(\d+)/.exec(io)?.[1] ?? NaN) }
  } catch { return { reads: NaN, writes: NaN } }
}

export function rssMiB (pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : NaN
  } catch { return NaN }
}

/** VmRSS split into anonymous pages (the process's own) and file pages (mostly the node binary, shared by every node process on the host) */
export function rssSplitMiB (pid: number | undefined): { anon: number, file: number } {
  try {
    const st = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? NaN) / 1024
    return { anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
  } catch { return { anon: NaN, file: NaN } }
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
export async function meshMins (peers: SwarmPeer[]): Promise<number[]> {
  return await pool(peers, 25, async p => {
    try {
      const s = await p.api('GET', '/v1/status', undefined, 10_000)
      p.status = s
      return s.topics.length === 0 ? 0 : Math.min(...s.topics.map((t: { meshPeers: number }) => t.meshPeers))
    } catch { return NaN }
  })
}
