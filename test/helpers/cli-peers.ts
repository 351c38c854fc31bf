import { join } from 'node:path'
import { firstJson, hasJson, killAll, startCli, stopProc, waitForOutput, type Proc } from './procs.js'

// A bootstrap node and peers joined to it, each a `proofswarm` process on a
// loopback port with warn-level logs (the setup of the multi-process shard
// and memory tests).

const LOOPBACK = ['--listen', '/ip4/127.0.0.1/tcp/0']

export interface CliBootstrap { proc: Proc, addr: string }

export interface CliPeer { proc: Proc, dataDir: string, id: string, addr: string }

/** `proofswarm bootstrap`, once it printed its addresses (20 s at most). */
export async function startCliBootstrap (dataDir: string, env: Record<string, string> = {}): Promise<CliBootstrap> {
  const proc = startCli(['bootstrap', '--data-dir', dataDir, ...LOOPBACK, '--json', '--log-level', 'warn'], env)
  await waitForOutput(proc, hasJson, 20_000, 'bootstrap ready')
  return { proc, addr: firstJson(proc.stdout()).multiaddrs[0] }
}

/** `proofswarm join` through `bootAddr`, once it printed its peer id (40 s at most). */
export async function startCliPeer (bootAddr: string, dataDir: string, env: Record<string, string> = {}, what = 'peer ready'): Promise<CliPeer> {
  const proc = startCli(['join', '--bootstrap', bootAddr, '--data-dir', dataDir, '--json', ...LOOPBACK, '--log-level', 'warn'], env)
  await waitForOutput(proc, hasJson, 40_000, what)
  const ready = firstJson(proc.stdout())
  return { proc, dataDir, id: ready.peerId, addr: ready.multiaddrs[0] }
}

/** A bootstrap (dir/boot) and peers joined to it (dir/<name>); stop() stops every one of them. */
export class CliSwarm {
  private readonly procs: Proc[] = []
  private constructor (readonly dir: string, readonly boot: CliBootstrap) { this.procs.push(boot.proc) }

  static async start (dir: string): Promise<CliSwarm> {
    return new CliSwarm(dir, await startCliBootstrap(join(dir, 'boot')))
  }

  get bootAddr (): string { return this.boot.addr }

  /** A peer in dir/<name> (the same name again: the same data dir, so the same peer id after a restart). */
  async join (name: string, env: Record<string, string> = {}, what = `${name} ready`): Promise<CliPeer> {
    const p = await startCliPeer(this.boot.addr, join(this.dir, name), env, what)
    this.procs.push(p.proc)
    return p
  }

  async stop (): Promise<void> {
    await Promise.all(this.procs.map(async p => await stopProc(p)))
    killAll()
  }
}
