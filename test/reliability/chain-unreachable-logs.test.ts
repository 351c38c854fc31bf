import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startChainProcess, type ChainProcess } from '../integration/chain-process.js'
import { CliSwarm } from '../helpers/cli-peers.js'
import { hasJson, killAll, sleep, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// With the chain gone, a peer's stderr got ~3 non-JSON "API-WS: disconnected"
// lines a second from @polkadot/api (its own 1 s reconnect loop, and its
// pending requests failing). Now every line is a JSON log record, with one
// line per reconnect attempt, spaced by a backoff; the peer reconnects when
// the chain is back.

let dir: { path: string, cleanup: () => Promise<void> }
let chain: ChainProcess | undefined
let swarm: CliSwarm | undefined
let peer: Proc

beforeAll(async () => {
  dir = await tempDir('ps-chain-logs-')
  swarm = await CliSwarm.start(dir.path)
}, 60_000)

afterAll(async () => {
  if (peer != null) await stopProc(peer)
  await swarm?.stop()
  await chain?.stop()
  killAll()
  await dir?.cleanup()
})

const records = (stderr: string): string[] => stderr.split('\n').filter(l => l.trim() !== '')

describe('a peer whose chain goes away', () => {
  it('logs JSON only: one line per reconnect attempt with a backoff, then reconnects', async () => {
    chain = await startChainProcess(join(dir.path, 'chain'), ['--block-time', '200'])
    const port = new URL(chain.url).port
    peer = startCli(['join', '--bootstrap', swarm!.bootAddr, '--data-dir', join(dir.path, 'peer'), '--listen', '/ip4/127.0.0.1/tcp/0',
      '--json', '--log-level', 'info', '--chain', chain.url, '--account', '//Alice'], { PROOFSWARM_LOG_LEVEL: 'info' })
    await waitForOutput(peer, hasJson, 40_000, 'peer ready')
    // connected: give it a moment to register and subscribe
    await waitFor(async () => peer.stderr().includes('registered') || peer.stderr().includes('chain') ? true : undefined, 20_000, 'peer on chain').catch(() => {})
    await sleep(1000)
    const before = records(peer.stderr()).length
    chain.proc.kill('SIGKILL')
    await new Promise(resolve => chain!.proc.once('exit', resolve))
    await sleep(6000)
    const during = records(peer.stderr()).slice(before)
    const notJson = during.filter(l => { try { JSON.parse(l); return false } catch { return true } })
    expect(notJson, notJson.slice(0, 5).join('\n')).toEqual([])
    const attempts = during.map(l => JSON.parse(l)).filter(r => r.attempt != null && /reconnecting/.test(r.msg))
    // 0.5, 1, 2 s… apart: 3–5 attempts in 6 s, not one a second
    expect(attempts.length).toBeGreaterThanOrEqual(2)
    expect(attempts.length).toBeLessThanOrEqual(5)
    const gaps = attempts.slice(1).map((r, i) => r.time - attempts[i].time)
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1])
    expect(during.length).toBeLessThan(20)

    // the chain comes back on the same port: the peer reconnects
    chain = await startChainProcess(join(dir.path, 'chain'), ['--block-time', '200', '--port', port])
    await waitFor(async () => records(peer.stderr()).some(l => l.includes('reconnected to the chain')) ? true : undefined, 40_000, 'reconnected')
  }, 90_000)
})
