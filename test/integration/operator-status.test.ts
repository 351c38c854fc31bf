import { afterAll, describe, expect, it } from 'vitest'
import { ControlClient } from '../../node/control/client.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { runCli, waitFor } from '../helpers/procs.js'

// What an operator sees when something is wrong: `status` names the chain
// endpoint, the account, the connection state and the recent failures;
// /metrics has the node's task, role and chain series; a filter nothing can
// match is an error. Real chain process, real peer.

let swarm: ChainSwarm | undefined
afterAll(async () => { await swarm?.stop() })

describe('operator status', () => {
  it('status shows the chain link and its loss; metrics; invalid trace filters and a submit without the role fail at once', async () => {
    swarm = await ChainSwarm.start('psw-opstatus-', ['--block-time', '200'], ['//Peer4'])
    const p = await swarm.startPeer('verifier', 'verifier', '//Peer4')
    await swarm.waitRegistered()
    const dd = ['--data-dir', p.dataDir]

    const js = await waitFor(async () => {
      const r = await runCli(['status', '--json', ...dd])
      const s = JSON.parse(r.stdout) as { chain: { url: string, account: string, state: string, head?: number }, failures: unknown[] }
      return s.chain.state === 'connected' && (s.chain.head ?? 0) > 0 ? s : undefined
    }, 20_000, 'a connected chain in status')
    expect(js.chain.url).toBe(swarm.chain.url)
    expect(js.chain.account).toMatch(/^5\w{40,}/)
    expect(js.failures).toEqual([])
    const text = (await runCli(['status', ...dd])).stdout
    expect(text).toContain(`chain:          ${swarm.chain.url}  CONNECTED`)
    expect(text).toContain(`account:        ${js.chain.account}`)
    expect(text).toMatch(/recent failures: none/)
    expect(text).toMatch(/private addresses: kept/)

    const metrics = await (await ControlClient.fromDataDir(p.dataDir)).get<string>('/metrics')
    expect(metrics).toMatch(/^proofswarm_role\{role="verifier"\} 1$/m)
    expect(metrics).toMatch(/^proofswarm_role\{role="solver"\} 0$/m)
    expect(metrics).toMatch(/^proofswarm_tasks\{phase="Verifying"\} 0$/m)
    expect(metrics).toMatch(/^proofswarm_chain_connected 1$/m)
    expect(Number(/^proofswarm_chain_height (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0)
    expect(metrics).toMatch(/^# TYPE proofswarm_fetch_failures_total counter$/m)
    expect(metrics).toMatch(/^# TYPE proofswarm_verifications_total counter$/m)
    expect(metrics).toMatch(/^# TYPE proofswarm_disputes_total counter$/m)

    const bad = await runCli(['trace', '--role', 'judge', ...dd])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--role judge: no such role; roles are submitter, solver, verifier, whistleblower/)

    // a peer without the submitter role refuses before anything is said to be submitted
    const taskFile = await swarm.newTask(['--model', 'mlp', '--dataset', 'synthetic', '--steps', '10'])
    const sub = await runCli(['submit', '--task', taskFile, ...dd])
    expect(sub.code).toBe(2)
    expect(sub.stderr).toMatch(/does not have the submitter role; add it with "proofswarm roles add submitter"/)
    expect(sub.stderr).not.toMatch(/submitting/)

    // the chain goes away: status says so, with the failure
    await swarm.chain.stop()
    const down = await waitFor(async () => {
      const s = JSON.parse((await runCli(['status', '--json', ...dd])).stdout) as { chain: { state: string }, failures: Array<{ kind: string, message: string }> }
      return s.chain.state === 'disconnected' ? s : undefined
    }, 20_000, 'the lost chain in status')
    expect(down.failures[0]).toMatchObject({ kind: 'chain' })
    expect(down.failures[0].message).toContain('lost the connection')
    const after = (await runCli(['status', ...dd])).stdout
    expect(after).toMatch(/chain: +\S+ +DISCONNECTED since .*\(lost the connection/)
    expect(after).toMatch(/recent failures: \n {2}\S+ {2}chain: lost the connection/)
    const m2 = await (await ControlClient.fromDataDir(p.dataDir)).get<string>('/metrics')
    expect(m2).toMatch(/^proofswarm_chain_connected 0$/m)
    // losing the chain leaves no rejection unhandled (each would be counted here, and logged, by node/process-policy.ts)
    expect(m2).toMatch(/^proofswarm_unhandled_rejections_total 0$/m)
    expect(after).toMatch(/^unhandled rejections: 0$/m)
    // the last height seen stays; the state is in proofswarm_chain_connected
    expect(Number(/^proofswarm_chain_height (\d+)$/m.exec(m2)?.[1])).toBeGreaterThan(0)
  }, 120_000)
})
