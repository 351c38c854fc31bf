import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { NetnsLan } from '../helpers/netns.js'
import { tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// The operator's guide, followed to the letter on four "hosts" (network
// namespaces on one bridge, 10.77.0.0/24): the chain and the bootstrap peer
// on one, a submitter, a solver and a verifier on one each. The commands are
// read from docs/operators-guide.md ("A swarm across hosts, step by step");
// the join commands must be the one the bootstrap peer printed, with each
// host's account and roles. The task must settle, paid.

interface GuideCommand { host: string, line: string }

/** The sh block of the guide's multi-host section: each `proofswarm` line with the host its comment names. */
function guideCommands (): GuideCommand[] {
  const md = readFileSync('docs/operators-guide.md', 'utf8')
  const section = md.split('## A swarm across hosts, step by step')[1]
  if (section == null) throw new Error('docs/operators-guide.md has no "A swarm across hosts, step by step" section')
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  if (block == null) throw new Error('the multi-host section has no sh block')
  const out: GuideCommand[] = []
  let hosts: string[] = []
  let next = 0
  for (const raw of block.split('\n')) {
    const line = raw.trim()
    const hostComment = /^#\s*((?:10\.77\.0\.\d+(?:,\s*)?)+)/.exec(line)
    if (hostComment != null) { hosts = hostComment[1].split(',').map(h => h.trim()).filter(h => h !== ''); next = 0; continue }
    if (!line.startsWith('proofswarm ')) continue
    if (hosts.length === 0) throw new Error(`no host named before "${line}"`)
    // one command per host when a comment names several (the joins), else every command on the one host
    const host = hosts.length > 1 ? hosts[next++ % hosts.length] : hosts[0]
    out.push({ host, line })
  }
  return out
}

const lan: { net?: NetnsLan } = {}
// a failure before the test's own teardown still removes every namespace
afterAll(async () => { await lan.net?.stop() })

describe('a swarm across hosts, from the operator\'s guide', () => {
  it('chain + bootstrap on one host, three peers on three others: a task settles', async () => {
    const commands = guideCommands()
    const addrs = [...new Set(commands.map(c => c.host))].sort()
    expect(addrs).toEqual(['10.77.0.1', '10.77.0.2', '10.77.0.3', '10.77.0.4'])
    const dir = await tempDir('psw-netns-')
    const net = lan.net = NetnsLan.create(addrs)
    const home = (addr: string): string => { const h = join(dir.path, addr); mkdirSync(h, { recursive: true }); return h }
    const daemons: Proc[] = []
    const show = (): string => daemons.map(d => `--- ${d.child.spawnargs.slice(4, 6).join(' ')}\n${d.stdout().slice(-1500)}\n${d.stderr().slice(-2500)}`).join('\n')
    try {
      let bootId: string | undefined
      let printedJoin: string | undefined
      for (const c of commands) {
        const argv = c.line.replace('<bootstrap peer id>', bootId ?? '<bootstrap peer id>').split(/\s+/).slice(1)
        const [cmd] = argv
        if (cmd === 'chain') {
          const p = net.proofswarm(c.host, argv, { home: home(c.host) })
          daemons.push(p)
          // the chain prints one dialable URL per interface: the LAN one among them
          await waitForOutput(p, out => out.includes(`ws://${c.host}:9944`), 30_000, 'the chain\'s LAN URL')
        } else if (cmd === 'bootstrap') {
          const p = net.proofswarm(c.host, argv, { home: home(c.host) })
          daemons.push(p)
          const out = await waitForOutput(p, o => /another host joins with:\n {2}proofswarm join .*\n/.test(o), 30_000, 'the bootstrap\'s join command')
          printedJoin = /another host joins with:\n {2}(proofswarm join .*)\n/.exec(out)![1]
          bootId = /peer (12D3\w+) ready/.exec(out)?.[1]
          expect(bootId).toBeDefined()
        } else if (cmd === 'join') {
          // the guide's join is the bootstrap's printed command with this host's account and roles
          const account = argv[argv.indexOf('--account') + 1]
          const roles = argv[argv.indexOf('--roles') + 1]
          expect(['proofswarm', ...argv].join(' ')).toBe(printedJoin!.replace('<secret URI or key file>', account).replace('<solver,verifier,…>', roles))
          const p = net.proofswarm(c.host, argv, { home: home(c.host) })
          daemons.push(p)
          await waitForOutput(p, o => o.includes('ready on network "lan"'), 45_000, `the ${roles} on ${c.host} ready`)
        } else if (cmd === 'submit') {
          // "once `proofswarm status` there shows the other peers": the three other peers (and the bootstrap)
          await waitFor(async () => {
            const r = await net.run(c.host, ['status', '--json'], { home: home(c.host) }, 20_000)
            const s = JSON.parse(r.stdout) as { connectedPeers: Array<{ addrs: string[] }> }
            return s.connectedPeers.length >= 3 ? s : undefined
          }, 60_000, 'the submitter connected to the other peers')
          const r = await net.run(c.host, argv, { home: home(c.host) }, 90_000)
          expect(r.code, `${c.line}\n${r.stdout}\n${r.stderr}`).toBe(0)
        } else if (cmd === 'tasks') {
          // the task settles: proof committed, the verifier's verdict stood, everyone paid
          const settled = await waitFor(async () => {
            const r = await net.run(c.host, argv, { home: home(c.host) }, 20_000)
            // the payout line comes from the peer's task book, which records TaskSettled a moment after the phase
            return /phase=Settled/.test(r.stdout) && /settled: /.test(r.stdout) ? r.stdout : undefined
          }, 180_000, 'the task settled', 2000).catch((err: Error) => { throw new Error(`${err.message}\n${show()}`) })
          expect(settled).toMatch(/settled: success=true solver paid [1-9]/)
          expect(settled).toMatch(/verdicts: \S+:accept/)
        } else {
          const r = await net.run(c.host, argv, { home: home(c.host) }, 60_000)
          expect(r.code, `${c.line}\n${r.stdout}\n${r.stderr}`).toBe(0)
        }
      }
      // the peers reached each other across the LAN, not only the bootstrap peer
      const st = JSON.parse((await net.run('10.77.0.3', ['status', '--json'], { home: home('10.77.0.3') }, 20_000)).stdout) as { connectedPeers: Array<{ addrs: string[] }>, privateAddrs: { kept: boolean } }
      expect(st.privateAddrs.kept).toBe(true)
      const remote = st.connectedPeers.flatMap(p => p.addrs).filter(a => /^\/ip4\/10\.77\.0\.[124]\//.test(a))
      expect(new Set(remote.map(a => a.split('/')[2])).size).toBeGreaterThanOrEqual(3)
    } finally {
      await net.stop()
      await dir.cleanup().catch(() => {})
    }
    expect(net.exists()).toBe(false)
  }, 360_000)
})
