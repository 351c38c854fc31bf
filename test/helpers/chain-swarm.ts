import { join } from 'node:path'
import { expect } from 'vitest'
import { ChainClient, type ChainEvent } from '../../node/chain/client.js'
import { startChainProcess, type ChainProcess } from '../integration/chain-process.js'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from './procs.js'

// A dev chain, a bootstrap peer and role peers as separate processes on
// 127.0.0.1, with an observer that records the chain's events: the setup the
// dispute and availability scenarios share.

export interface SwarmPeer { proc: Proc, dataDir: string, account: string, peerId: string }

export class ChainSwarm {
  readonly events: ChainEvent[] = []
  readonly peers = new Map<string, SwarmPeer>()
  /** dev account URI (//Peer2) → hex account id */
  readonly accountIds = new Map<string, string>()
  private boot?: Proc
  private bootAddr = ''

  private constructor (readonly dir: { path: string, cleanup: () => Promise<void> }, readonly chain: ChainProcess, readonly observer: ChainClient) {}

  /** Starts the chain (extra `proofswarm chain` flags) and a bootstrap peer. */
  static async start (prefix: string, chainArgs: string[], accounts: string[]): Promise<ChainSwarm> {
    const dir = await tempDir(prefix)
    const chain = await startChainProcess(join(dir.path, 'chain'), chainArgs)
    let observer: ChainClient | undefined
    let boot: Proc | undefined
    try {
      observer = await ChainClient.connect({ url: chain.url, signer: '//Alice' })
      const s = new ChainSwarm(dir, chain, observer)
      await observer.onEvents(e => { s.events.push(e) })
      const { Keyring } = await import('@polkadot/keyring')
      const { u8aToHex } = await import('@polkadot/util')
      const k = new Keyring({ type: 'sr25519' })
      for (const a of accounts) s.accountIds.set(a, u8aToHex(k.addFromUri(a).publicKey))
      s.boot = boot = startCli(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir.path, 'boot')])
      await waitForOutput(s.boot, hasJson, 20_000, 'bootstrap ready')
      s.bootAddr = firstJson(s.boot.stdout()).multiaddrs[0]
      return s
    } catch (err) {
      // the test never gets a swarm to stop: a chain and bootstrap left running would slow every later test of the run
      if (boot != null) await stopProc(boot)
      await observer?.disconnect().catch(() => {})
      await chain.stop()
      await dir.cleanup()
      throw err
    }
  }

  /** `proofswarm join` with roles and a chain account; resolves once the peer reports ready. */
  async startPeer (name: string, roles: string, account: string, extra: string[] = [], env: Record<string, string> = {}): Promise<SwarmPeer> {
    const dataDir = join(this.dir.path, name)
    const proc = startCli(['join', '--json', '--bootstrap', this.bootAddr, '--roles', roles, '--chain', this.chain.url, '--account', account, '--data-dir', dataDir, '--listen', '/ip4/127.0.0.1/tcp/0', ...extra], env)
    await waitForOutput(proc, hasJson, 30_000, `${name} ready`)
    const p = { proc, dataDir, account, peerId: firstJson(proc.stdout()).peerId }
    this.peers.set(name, p)
    return p
  }

  /** The same peer (account, peer id, data dir) restarted with other flags. */
  async restartPeer (name: string, roles: string, extra: string[] = []): Promise<SwarmPeer> {
    const p = this.peers.get(name)
    if (p == null) throw new Error(`no peer ${name}`)
    await stopProc(p.proc)
    this.peers.delete(name)
    return await this.startPeer(name, roles, p.account, extra)
  }

  async waitRegistered (): Promise<void> {
    await waitFor(async () => {
      for (const p of this.peers.values()) if (await this.observer.peerOwner(p.peerId) == null) return false
      return true
    }, 30_000, 'on-chain registrations')
  }

  /** Writes task.json (`proofswarm task new` flags) into the swarm's directory. */
  async newTask (args: string[]): Promise<string> {
    const file = join(this.dir.path, 'task.json')
    const r = await runCli(['task', 'new', ...args, '--out', file])
    expect(r.code, r.stderr).toBe(0)
    return file
  }

  /**
   * Submits task.json through the `submitter` peer; returns the task id. The default windows are wide, in
   * blocks of these swarms' short block times: from its selection to its proof on chain a solver fetches the
   * program, runs the commitments and the training in two engine processes, codes and publishes its
   * checkpoints (24 s of it at load 27 on 2 cores for a 20-step MLP), and a verifier replays and disputes;
   * a scenario seals what is left of them once its parties have acted (settleNow).
   */
  async submit (extra: string[] = ['--verifiers', '1', '--challenge-window', '200', '--solve-timeout', '300']): Promise<number> {
    const sub = await runCli(['submit', '--task', join(this.dir.path, 'task.json'), ...extra, '--json', '--data-dir', this.peers.get('submitter')!.dataDir], 120_000)
    expect(sub.code, sub.stderr).toBe(0)
    return JSON.parse(sub.stdout).taskId
  }

  /** The first Arbitration event `method` whose data satisfies `pred`. */
  ev (method: string, pred: (d: Record<string, unknown>) => boolean = () => true): ChainEvent | undefined {
    return this.events.find(e => e.section === 'arbitration' && e.method === method && pred(e.data as Record<string, unknown>))
  }

  /** waitFor, with the chain's events and the peers' log tails on a timeout (what went wrong where). */
  async waitOr<T> (fn: () => Promise<T | undefined | false>, ms: number, what: string, everyMs = 300): Promise<T> {
    try { return await waitFor(fn, ms, what, everyMs) } catch (err) {
      const tails = [...this.peers.entries()].map(([n, p]) => `--- ${n}\n${p.proc.stderr().split('\n').filter(l => !/"level":(10|20)/.test(l)).slice(-25).map(l => l.slice(0, 400)).join('\n')}`).join('\n')
      throw new Error(`${(err as Error).message}\nchain events: ${this.events.filter(e => e.section === 'arbitration').map(e => e.method).join(', ')}\n${tails}`)
    }
  }

  /**
   * Seals blocks at once (engine_createBlock: the chain must run with --unsafe-rpc) until `done` gives a
   * value, looking every `every` blocks: for a test whose parties have all acted and that only waits out
   * a window counted in blocks. The chain's timer goes on sealing beside it.
   */
  async sealUntil<T> (done: () => Promise<T | undefined | false>, what: string, maxBlocks = 1000, every = 5): Promise<T> {
    for (let n = 0; n <= maxBlocks; n++) {
      if (n % every === 0) {
        const v = await done()
        if (v !== undefined && v !== false) return v
      }
      if (n < maxBlocks) await this.observer.api.rpc.engine.createBlock(true, true)
    }
    return await this.waitOr(done, 10_000, `${what} (after ${maxBlocks} sealed blocks)`)
  }

  /** sealUntil the task is Failed or Settled. */
  async settleNow (taskId: number): Promise<{ phase: string, solverFailed: boolean }> {
    return await this.sealUntil(async () => { const t = await this.observer.task(taskId); return t?.phase === 'Failed' || t?.phase === 'Settled' ? t : undefined }, 'settlement')
  }

  async stop (): Promise<void> {
    await Promise.all([...this.peers.values()].map(async p => await stopProc(p.proc)))
    if (this.boot != null) await stopProc(this.boot)
    await this.observer.disconnect().catch(() => {})
    await this.chain.stop()
    killAll()
    await this.dir.cleanup()
  }
}
