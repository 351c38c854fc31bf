import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { ChainClient, type ChainEvent } from '../../node/chain/client.js'
import { startChainProcess, type ChainProcess } from './chain-process.js'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// Disputes between real peers (separate processes) over libp2p, ending on the
// real dev chain: a solver started with `--fault tamper-op=BatchMatMul@8`
// commits a self-consistent but wrong proof; a verifier replaying every
// interval rejects it, opens a dispute, bisects with the solver over
// /proofswarm/dispute/1.0.0 down to one MatMul element and wins on chain
// (solver slashed, task Failed). The same solver restarted with other faults:
// lying in bisection (a `lie` claim), a weight perturbed after the step (a
// `state` claim), silent (it never answers and loses by timeout).

const BLOCK_MS = 300
const TAMPERED_STEP = 8 // 1-based engine step; on chain: step 7
let dir: { path: string, cleanup: () => Promise<void> }
let chain: ChainProcess
let boot: Proc
let bootAddr: string
let observer: ChainClient
const events: ChainEvent[] = []
const peers = new Map<string, { proc: Proc, dataDir: string, account: string, peerId: string }>()
const accountIds = new Map<string, string>()

async function startPeer (name: string, roles: string, account: string, extra: string[] = []): Promise<void> {
  const dataDir = join(dir.path, name)
  const proc = startCli(['join', '--json', '--bootstrap', bootAddr, '--roles', roles, '--chain', chain.url, '--account', account, '--data-dir', dataDir, '--listen', '/ip4/127.0.0.1/tcp/0', ...extra])
  await waitForOutput(proc, hasJson, 30_000, `${name} ready`)
  peers.set(name, { proc, dataDir, account, peerId: firstJson(proc.stdout()).peerId })
}

async function submit (): Promise<number> {
  const sub = await runCli(['submit', '--task', join(dir.path, 'task.json'), '--verifiers', '1', '--challenge-window', '60', '--solve-timeout', '100', '--json', '--data-dir', peers.get('submitter')!.dataDir], 120_000)
  expect(sub.code, sub.stderr).toBe(0)
  return JSON.parse(sub.stdout).taskId
}

/** waitFor, with the chain's events and the peers' log tails on a timeout (what went wrong where) */
async function waitOr<T> (fn: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  try { return await waitFor(fn, ms, what, 500) } catch (err) {
    const tails = [...peers.entries()].map(([n, p]) => `--- ${n}\n${p.proc.stderr().split('\n').filter(l => !/"level":(10|20)/.test(l)).slice(-25).map(l => l.slice(0, 400)).join('\n')}`).join('\n')
    throw new Error(`${(err as Error).message}\nchain events: ${events.filter(e => e.section === 'arbitration').map(e => e.method).join(', ')}\n${tails}`)
  }
}

async function restartSolver (faults: string[]): Promise<void> {
  const s = peers.get('solver')!
  await stopProc(s.proc)
  peers.delete('solver')
  await startPeer('solver', 'solver', '//Peer2', faults)
}

const ev = (method: string, pred: (d: Record<string, unknown>) => boolean = () => true): ChainEvent | undefined =>
  events.find(e => e.section === 'arbitration' && e.method === method && pred(e.data as Record<string, unknown>))

beforeAll(async () => {
  dir = await tempDir('proofswarm-dispute-')
  chain = await startChainProcess(join(dir.path, 'chain'), ['--block-time', String(BLOCK_MS), '--dispute-clock', '40'])
  observer = await ChainClient.connect({ url: chain.url, signer: '//Alice' })
  await observer.onEvents(e => { events.push(e) })
  const { Keyring } = await import('@polkadot/keyring')
  const { u8aToHex } = await import('@polkadot/util')
  const k = new Keyring({ type: 'sr25519' })
  for (const s of ['//Peer1', '//Peer2', '//Peer4']) accountIds.set(s, u8aToHex(k.addFromUri(s).publicKey))
  boot = startCli(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir.path, 'boot')])
  await waitForOutput(boot, hasJson, 20_000, 'bootstrap ready')
  bootAddr = firstJson(boot.stdout()).multiaddrs[0]
  await Promise.all([
    startPeer('submitter', 'submitter', '//Peer1'),
    // stake well over the minimum so the solver is still eligible after one slash
    startPeer('solver', 'solver', '//Peer2', ['--stake', '10000', '--fault', `tamper-op=BatchMatMul@${TAMPERED_STEP}`]),
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

describe('disputes between real peers on the dev chain', () => {
  it('a tampered op: the verifier bisects with the solver to one element and wins; the solver is slashed, the task fails', async () => {
    const t0 = Date.now()
    const taskId = await submit()
    const opened = await waitOr(async () => ev('DisputeOpened', d => Number(d.taskId) === taskId), 90_000, 'dispute opened')
    expect(opened.data.challenger).toBe(accountIds.get('//Peer4'))
    expect(opened.data.defender).toBe(accountIds.get('//Peer2'))
    expect(opened.data.disputedStep).toBe(TAMPERED_STEP - 1)
    const tOpen = Date.now()
    const resolved = await waitOr(async () => ev('DisputeResolved', d => d.disputeId === opened.data.disputeId), 90_000, 'dispute resolved')
    const wall = Date.now() - tOpen
    expect(resolved.data.winner).toBe(accountIds.get('//Peer4'))
    expect(resolved.data.loser).toBe(accountIds.get('//Peer2'))
    expect(resolved.data.how).toBe('Adjudicated')
    expect(resolved.data.forcedError).toBe(false)
    const adj = ev('Adjudicated', d => d.disputeId === opened.data.disputeId)!
    expect(Buffer.from(String(adj.data.kind).slice(2), 'hex').toString()).toBe('element')
    // the solver may prove a forced error for RevealWindow blocks; it has none here, so it is slashed after that
    const penalized = await waitOr(async () => ev('SolverPenalized', d => d.disputeId === opened.data.disputeId), 60_000, 'the solver penalized after its reveal window')
    expect(ev('Slashed', d => d.who === accountIds.get('//Peer2') && d.toWinner != null)?.blockNumber).toBe(penalized.blockNumber)
    expect(ev('ForcedErrorRevealed', d => Number(d.taskId) === taskId)).toBeUndefined()
    const moves = (await observer.dispute(Number(opened.data.disputeId)))!.moves
    expect(moves).toBeGreaterThan(4)
    expect(moves).toBeLessThanOrEqual(60)
    const settled = await waitFor(async () => { const t = await observer.task(taskId); return t?.phase === 'Failed' || t?.phase === 'Settled' ? t : undefined }, 60_000, 'settlement', 500)
    expect(settled.phase).toBe('Failed')
    expect(settled.solverFailed).toBe(true)
    const blocks = resolved.blockNumber - opened.blockNumber
    process.stdout.write(`DISPUTE-FIGURES ${JSON.stringify({ scenario: 'tamper-op', moves, wallMs: wall, blocks, blockMs: BLOCK_MS, totalMs: Date.now() - t0 })}\n`)
  }, 200_000)

  // the same solver (account, peer id, data dir) restarted with other faults; each scenario slashes
  // half its stake, which stays over the minimum for the next one
  for (const [name, faults, kind] of [
    ['a solver lying in bisection loses on a lie claim', ['--fault', `tamper-op=BatchMatMul@${TAMPERED_STEP}`, '--fault', 'lie-in-bisection'], 'lie'],
    ['a weight perturbed after a step (honest trace, wrong root) loses on a state claim', ['--fault', `tamper-weight@${TAMPERED_STEP}`], 'state']
  ] as const) {
    it(name, async () => {
      await restartSolver([...faults])
      const taskId = await submit()
      const opened = await waitOr(async () => ev('DisputeOpened', d => Number(d.taskId) === taskId), 90_000, 'dispute opened')
      expect(opened.data.disputedStep).toBe(TAMPERED_STEP - 1)
      const resolved = await waitOr(async () => ev('DisputeResolved', d => d.disputeId === opened.data.disputeId), 90_000, 'dispute resolved')
      expect(resolved.data.winner).toBe(accountIds.get('//Peer4'))
      expect(resolved.data.how).toBe('Adjudicated')
      const adj = ev('Adjudicated', d => d.disputeId === opened.data.disputeId)!
      expect(Buffer.from(String(adj.data.kind).slice(2), 'hex').toString()).toBe(kind)
      const settled = await waitFor(async () => { const t = await observer.task(taskId); return t?.phase === 'Failed' || t?.phase === 'Settled' ? t : undefined }, 60_000, 'settlement', 500)
      expect(settled.phase).toBe('Failed')
    }, 200_000)
  }

  it('a silent solver loses by timeout', async () => {
    await restartSolver(['--fault', `tamper-op=BatchMatMul@${TAMPERED_STEP}`, '--fault', 'silent'])
    const taskId = await submit()
    const opened = await waitOr(async () => ev('DisputeOpened', d => Number(d.taskId) === taskId), 90_000, 'dispute opened')
    const tOpen = Date.now()
    const resolved = await waitOr(async () => ev('DisputeResolved', d => d.disputeId === opened.data.disputeId), 60_000, 'dispute resolved')
    expect(resolved.data.winner).toBe(accountIds.get('//Peer4'))
    expect(resolved.data.how).toBe('Timeout')
    expect((await observer.dispute(Number(opened.data.disputeId)))!.moves).toBe(0)
    const settled = await waitFor(async () => { const t = await observer.task(taskId); return t?.phase === 'Failed' || t?.phase === 'Settled' ? t : undefined }, 60_000, 'settlement', 500)
    expect(settled.phase).toBe('Failed')
    process.stdout.write(`DISPUTE-FIGURES ${JSON.stringify({ scenario: 'silent', wallMs: Date.now() - tOpen, blocks: resolved.blockNumber - opened.blockNumber, blockMs: BLOCK_MS })}\n`)
  }, 200_000)
})
