import { execFileSync, spawn } from 'node:child_process'
import { CLI, type Proc } from './procs.js'

// Hosts on one LAN, made of Linux network namespaces: a hub namespace holds a
// bridge, and each host namespace one end of a veth pair (eth0) whose other
// end is on the bridge. Everything lives in namespaces named after this
// process, so parallel runs do not collide and nothing touches the machine's
// own interfaces. Needs root and iproute2.

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

export class NetnsLan {
  readonly hub: string
  readonly hosts: Array<{ ns: string, addr: string }> = []
  private readonly procs = new Set<Proc>()

  private constructor (readonly prefix: string) { this.hub = `${prefix}-hub` }

  /** Namespaces left behind by a run that was killed (its pid is gone). */
  static removeStale (): void {
    for (const line of ip('netns', 'list').split('\n')) {
      const m = /^(psw(\d+)-\S+)/.exec(line)
      if (m != null && !alive(Number(m[2]))) { try { ip('netns', 'del', m[1]) } catch {} }
    }
  }

  /** `addrs`: one host per address, all in `cidr`'s subnet (e.g. 10.77.0.1 … with /24). */
  static create (addrs: string[], prefixLen = 24): NetnsLan {
    if (process.getuid?.() !== 0) throw new Error('network namespaces need root (run the test as root, as CI does)')
    try { ip('-V') } catch { throw new Error('the `ip` command (Debian package iproute2) is missing') }
    NetnsLan.removeStale()
    const lan = new NetnsLan(`psw${process.pid}`)
    try {
      ip('netns', 'add', lan.hub)
      ip('-n', lan.hub, 'link', 'add', 'br0', 'type', 'bridge')
      ip('-n', lan.hub, 'link', 'set', 'br0', 'up')
      addrs.forEach((addr, i) => {
        const ns = `${lan.prefix}-h${i}`
        ip('netns', 'add', ns)
        lan.hosts.push({ ns, addr })
        ip('-n', lan.hub, 'link', 'add', `v${i}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns)
        ip('-n', lan.hub, 'link', 'set', `v${i}`, 'master', 'br0')
        ip('-n', lan.hub, 'link', 'set', `v${i}`, 'up')
        ip('-n', ns, 'addr', 'add', `${addr}/${prefixLen}`, 'dev', 'eth0')
        ip('-n', ns, 'link', 'set', 'eth0', 'up')
        ip('-n', ns, 'link', 'set', 'lo', 'up')
      })
    } catch (err) {
      lan.destroy()
      throw err
    }
    return lan
  }

  nsOf (addr: string): string {
    const h = this.hosts.find(x => x.addr === addr)
    if (h == null) throw new Error(`no host ${addr} on this LAN`)
    return h.ns
  }

  /** `proofswarm <args>` on host `addr` (`ip netns exec` execs the command itself: the pid is node's). */
  proofswarm (addr: string, args: string[], o: { home: string, cwd?: string }): Proc {
    // each host has its own home: default data dirs (~/.proofswarm/…) do not collide
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: o.home, PROOFSWARM_LOG_LEVEL: 'info' }
    delete env.PROOFSWARM_HOME
    const child = spawn('ip', ['netns', 'exec', this.nsOf(addr), process.execPath, CLI, ...args], {
      cwd: o.cwd ?? o.home,
      env,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    child.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const exited = new Promise<number | null>(resolve => child.on('exit', code => { this.procs.delete(p); resolve(code) }))
    const p: Proc = { child, stdout: () => out, stderr: () => err, exited }
    this.procs.add(p)
    return p
  }

  /** Runs a command to completion (bounded). */
  async run (
    addr: string, args: string[], o: { home: string, cwd?: string }, timeoutMs = 60_000
  ): Promise<{ code: number | null, stdout: string, stderr: string }> {
    const p = this.proofswarm(addr, args, o)
    const t = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs)
    const code = await p.exited
    clearTimeout(t)
    return { code, stdout: p.stdout(), stderr: p.stderr() }
  }

  /** Stops every process (SIGTERM, then SIGKILL after `graceMs`), then deletes the namespaces. */
  async stop (graceMs = 8000): Promise<void> {
    const procs = [...this.procs]
    for (const p of procs) p.child.kill('SIGTERM')
    await Promise.race([Promise.all(procs.map(async p => await p.exited)), new Promise(resolve => setTimeout(resolve, graceMs))])
    for (const p of procs) if (p.child.exitCode == null) p.child.kill('SIGKILL')
    await Promise.race([Promise.all(procs.map(async p => await p.exited)), new Promise(resolve => setTimeout(resolve, 2000))])
    this.destroy()
  }

  /** Deletes the namespaces (their veths and the bridge go with them). */
  destroy (): void {
    for (const ns of [...this.hosts.map(h => h.ns), this.hub]) { try { ip('netns', 'del', ns) } catch {} }
  }

  /** Whether any of this LAN's namespaces still exists. */
  exists (): boolean {
    const list = ip('netns', 'list')
    return [this.hub, ...this.hosts.map(h => h.ns)].some(ns => list.split('\n').some(l => l.split(' ')[0] === ns))
  }
}
