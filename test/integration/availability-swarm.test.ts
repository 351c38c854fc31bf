import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { ChainClient, type ChainEvent } from '../../node/chain/client.js'
import { startChainProcess, type ChainProcess } from './chain-process.js'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// Data-availability challenges between real peers (separate processes) on the
// real dev chain (docs/disputes.md, "Withheld checkpoints"):
// - a solver started with `--fault bad-checkpoint` publishes checkpoints with a
//   flipped byte and keeps no true copy; the verifier finds that the fetched
//   checkpoint does not hash to the proof's state root, challenges its
//   availability on chain, the solver cannot post the sampled rows, the
//   verifier times the challenge out: the solver is slashed, the task fails;
// - the same solver restarted honest and challenged anyway answers with the
//   sampled rows in time: it keeps its stake, the challenger's deposit goes to
//   it, the task settles.

const BLOCK_MS = 300
const CLOCK = 20 // blocks the solver has to answer
let dir: { path: string, cleanup: () => Promise<void> }
let chain: ChainProcess
let boot: Proc
let bootAddr: string
let observer: ChainClient
const events: ChainEvent[] = []
const peers = new Map<string, { proc: Proc, dataDir: string, peerId: string }>()
const acct = new Map<string, string>()

async function startPeer (name: string, roles: string, account: string, extra: string[] = []): Promise<void> {
  const dataDir = join(dir.path, name)
  const proc = startCli(['join', '--json', '--bootstrap', bootAddr, '--roles', roles, '--chain', chain.url, '--account', account, '--data-dir', dataDir, '--listen', '/ip4/127.0.0.1/tcp/0', ...extra])
  await waitForOutput(proc, hasJson, 30_000, `${name} ready`)
  peers.set(name, { proc, dataDir, peerId: firstJson(proc.stdout()).peerId })
}

async function submit (): Promise<number> {
  const sub = await runCli(['submit', '--task', join(dir.path, 'task.json'), '--verifiers', '1', '--challenge-window', '60', '--solve-timeout', '100', '--json', '--data-dir', peers.get('submitter')!.dataDir], 120_000)
  expect(sub.code, sub.stderr).toBe(0)
  return JSON.parse(sub.stdout).taskId
}

const ev = (method: string, pred: (d: Record<string, unknown>) => boolean = () => true): ChainEvent | undefined =>
  events.find(e => e.section === 'arbitration' && e.method === method && pred(e.data as Record<string, unknown>))

/** waitFor, with the chain's events and the peers' log tails on a timeout */
async function waitOr<T> (fn: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  try { return await waitFor(fn, ms, what, 300) } catch (err) {
    const tails = [...peers.entries()].map(([n, p]) => `--- ${n}\n${p.proc.stderr().split('\n').filter(l => !/"level":(10|20)/.test(l)).slice(-20).map(l => l.slice(0, 400)).join('\n')}`).join('\n')
    throw new Error(`${(err as Error).message}\nchain events: ${events.filter(e => e.section === 'arbitration').map(e => e.method).join(', ')}\n${tails}`)
  }
}

const settled = async (taskId: number): Promise<{ phase: string, solverFailed: boolean }> =>
  await waitOr(async () => { const t = await observer.task(taskId); return t?.phase === 'Failed' || t?.phase === 'Settled' ? t : undefined }, 60_000, 'settlement')

beforeAll(async () => {
  dir = await tempDir('proofswarm-availability-')
  chain = await startChainProcess(join(dir.path, 'chain'), ['--block-time', String(BLOCK_MS), '--dispute-clock', String(CLOCK)])
  observer = await ChainClient.connect({ url: chain.url, signer: '//Alice' })
  await observer.onEvents(e => { events.push(e) })
  const { Keyring } = await import('@polkadot/keyring')
  const { u8aToHex } = await import('@polkadot/util')
  const k = new Keyring({ type: 'sr25519' })
  for (const s of ['//Peer1', '//Peer2', '//Peer4', '//Peer5']) acct.set(s, u8aToHex(k.addFromUri(s).publicKey))
  boot = startCli(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir.path, 'boot')])
  await waitForOutput(boot, hasJson, 20_000, 'bootstrap ready')
  bootAddr = firstJson(boot.stdout()).multiaddrs[0]
  await Promise.all([
    startPeer('submitter', 'submitter', '//Peer1'),
    // stake well over the minimum so the solver is still eligible after one slash
    startPeer('solver', 'solver', '//Peer2', ['--stake', '10000', '--fault', 'bad-checkpoint']),
    startPeer('verifier', 'verifier', '//Peer4', ['--verify-steps', 'all'])
  ])
  await waitFor(async () => {
    for (const p of peers.values()) if (await observer.peerOwner(p.peerId) == null) return false
    return true
  }, 30_000, 'on-chain registrations')
  const r = await runCli(['task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '20', '--checkpoint-every', '5', '--batch', '32', '--out', join(dir.path, 'task.json')])
  expect(r.code, r.stderr).toBe(0)
}, 120_000)

afterAll(async () => {
  await Promise.all([...peers.values()].map(async p => await stopProc(p.proc)))
  if (boot != null) await stopProc(boot)
  await observer?.disconnect().catch(() => {})
  await chain?.stop()
  killAll()
  await dir?.cleanup()
})

describe('data-availability challenges between real peers on the dev chain', () => {
  it('a solver publishing bad checkpoints is challenged, cannot answer, is slashed; the task fails', async () => {
    const t0 = Date.now()
    const stakeBefore = (await observer.node(acct.get('//Peer2')))!.stake
    const taskId = await submit()
    const opened = await waitOr(async () => ev('AvailabilityChallenged', d => Number(d.taskId) === taskId), 90_000, 'availability challenge opened')
    expect(opened.data.challenger).toBe(acct.get('//Peer4'))
    expect(opened.data.solver).toBe(acct.get('//Peer2'))
    expect(Number(opened.data.checkpointStep) % 5).toBe(0)
    // the verifier could not replay: it voted reject
    const verdict = ev('VerdictSubmitted', d => Number(d.taskId) === taskId)
    expect(verdict?.data.accept).toBe(false)
    const timedOut = await waitOr(async () => ev('AvailabilityTimedOut', d => d.challengeId === opened.data.challengeId), 60_000, 'availability timeout')
    expect(ev('AvailabilityAnswered', d => d.challengeId === opened.data.challengeId)).toBeUndefined()
    expect(timedOut.blockNumber).toBeGreaterThan(Number(opened.data.deadline))
    expect(BigInt(String(timedOut.data.slashed))).toBeGreaterThan(0n)
    expect((await observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore - BigInt(String(timedOut.data.slashed)))
    // the solver's node tried and said why it could not answer
    await waitOr(async () => /cannot answer the data-availability challenge/.test(peers.get('solver')!.proc.stderr()), 10_000, 'solver log')
    const t = await settled(taskId)
    expect(t.phase).toBe('Failed')
    expect(t.solverFailed).toBe(true)
    const c = await observer.availabilityChallenge(Number(opened.data.challengeId))
    expect(c?.status).toBe('TimedOut')
    process.stdout.write(`AVAILABILITY-FIGURES ${JSON.stringify({ scenario: 'bad-checkpoint', blocksToTimeout: timedOut.blockNumber - opened.blockNumber, blockMs: BLOCK_MS, totalMs: Date.now() - t0 })}\n`)
  }, 200_000)

  it('an honest solver challenged anyway answers in time, keeps its stake and gets the deposit; the task settles', async () => {
    const s = peers.get('solver')!
    await stopProc(s.proc)
    peers.delete('solver')
    await startPeer('solver', 'solver', '//Peer2')
    // a registered challenger of our own, challenging right after the commitment
    const challenger = await ChainClient.connect({ url: chain.url, signer: '//Peer5' })
    try {
      await challenger.registerNode('12D3KooWAvailabilityChallenger', 8, (await challenger.params()).minStake)
      const stakeBefore = (await observer.node(acct.get('//Peer2')))!.stake
      const freeBefore = (await observer.balance(acct.get('//Peer2'))).free
      const taskId = await submit()
      await waitOr(async () => ev('ProofCommitted', d => Number(d.taskId) === taskId), 90_000, 'proof committed')
      const reserved = (await challenger.balance()).reserved
      const id = await challenger.challengeAvailability(taskId, 5)
      expect((await challenger.balance()).reserved).toBeGreaterThan(reserved)
      const answered = await waitOr(async () => ev('AvailabilityAnswered', d => BigInt(String(d.challengeId)) === id), 30_000, 'availability answered')
      const view = (await observer.availabilityChallenge(id))!
      expect(view.status).toBe('Answered')
      expect(answered.blockNumber).toBeLessThanOrEqual(view.deadline)
      const bytes = (String(answered.data.response).length - 2) / 2
      expect(bytes).toBeGreaterThan(0)
      expect(bytes).toBeLessThanOrEqual(64 * 1024)
      // the deposit went to the solver, its stake is untouched, the challenger's deposit is gone
      expect((await challenger.balance()).reserved).toBe(reserved)
      expect((await observer.node(acct.get('//Peer2')))!.stake).toBe(stakeBefore)
      expect((await observer.balance(acct.get('//Peer2'))).free - freeBefore).toBeGreaterThanOrEqual(view.deposit)
      const t = await settled(taskId)
      expect(t.phase).toBe('Settled')
      process.stdout.write(`AVAILABILITY-FIGURES ${JSON.stringify({ scenario: 'honest-answer', responseBytes: bytes, blocksToAnswer: answered.blockNumber - view.openedAt })}\n`)
    } finally {
      await challenger.disconnect().catch(() => {})
    }
  }, 200_000)
})
