import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { encode } from 'cborg'
import type { ChainClient } from '../../node/chain/client.js'
import { ChainSwarm } from '../helpers/chain-swarm.js'
import { runCli, waitFor } from '../helpers/procs.js'

// The task lifecycle over a real swarm and the real dev chain: 5 peers
// (separate processes) + bootstrap + chain on 127.0.0.1. A solver is killed
// mid-task and replaced after its deadline; a peer's roles are switched
// mid-run; a peer sends malformed gossip and is penalised; the task settles.
// The task's windows are wide (a replacement solver trains and commits, two
// verifiers replay, on a loaded machine); a window that only has to pass, once
// every party that acts in it has acted, is sealed through at once.

/** blocks: the solver's deadline from its selection, the verifiers' window from the commitment */
const SOLVE_TIMEOUT = 400
const CHALLENGE_WINDOW = 200
const BLOCK_MS = 400

let sw: ChainSwarm
let dir: ChainSwarm['dir']
let observer: ChainClient
let peers: ChainSwarm['peers']

async function cli (name: string, ...args: string[]): Promise<any> {
  const r = await runCli([...args, '--json', '--data-dir', peers.get(name)!.dataDir], 60_000)
  if (r.code !== 0) throw new Error(`${args.join(' ')} on ${name} failed: ${r.stderr}`)
  if (args[0] === 'trace') return r.stdout.split('\n').filter(l => l.trim() !== '').map(l => JSON.parse(l))
  return JSON.parse(r.stdout.slice(r.stdout.indexOf(r.stdout.trimStart()[0])))
}

beforeAll(async () => {
  // --unsafe-rpc: a deadline or window that only has to pass is sealed through at once
  sw = await ChainSwarm.start('proofswarm-lifecycle-', ['--block-time', String(BLOCK_MS), '--unsafe-rpc'], [])
  ;({ dir, observer, peers } = sw)
  await Promise.all([
    sw.startPeer('submitter', 'submitter', '//Peer1'),
    sw.startPeer('solverA', 'solver', '//Peer2', ['--max-jobs', '1', '--max-job-memory', '2048']),
    sw.startPeer('solverB', 'solver', '//Peer3', ['--max-jobs', '1']),
    sw.startPeer('verifier', 'verifier', '//Peer4'),
    sw.startPeer('switcher', 'whistleblower', '//Peer5', [], { PROOFSWARM_DEBUG_ROUTES: '1' })
  ])
  await sw.waitRegistered()
}, 120_000)

afterAll(async () => { await sw?.stop() })

describe('task lifecycle on a swarm with the dev chain', () => {
  let taskId: number
  let firstSolver: string
  let replacement: string

  it('a malformed gossip message is rejected and its sender penalised', async () => {
    // the switcher misbehaves: its later verdict still counts (verdicts are on chain), only its gossip is ignored
    const s = peers.get('switcher')!
    // publish once the sender knows every peer's subscription (flood publishing reaches them all)
    await waitFor(async () => (await cli('switcher', 'status')).topics.find((t: any) => t.topic.endsWith('/tasks/1'))?.subscribers >= 5, 20_000, 'subscriptions known')
    const info = JSON.parse(readFileSync(join(s.dataDir, 'control.json'), 'utf8'))
    const token = readFileSync(join(s.dataDir, 'control.token'), 'utf8').trim()
    // a task message with its fields missing; n makes each attempt a new message, since a flood publish
    // reaches only peers whose outbound stream is already open and a resend of the same bytes is a duplicate
    const malformed = (n: number): string => Buffer.from(encode({ v: 1, type: 'task', n })).toString('hex')
    const sent: number[] = []
    const st = await waitFor(async () => {
      if (sent.length < 12 && (sent.length === 0 || Date.now() - sent.at(-1)! > 4000)) {
        const res = await fetch(`http://127.0.0.1:${info.port}/v1/debug/gossip-raw`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ topic: 'tasks', hex: malformed(sent.length) })
        })
        expect(res.status).toBe(200)
        sent.push(Date.now())
      }
      const st = await cli('verifier', 'status')
      return st.gossip.rejectedBy[s.peerId] >= 1 && st.gossip.scores[s.peerId] < 0 ? st : undefined
    }, 60_000, 'rejection and a negative score at the verifier')
    // only the malformed messages were rejected, none of the honest traffic
    expect(st.gossip.rejectedBy[s.peerId]).toBeLessThanOrEqual(sent.length)
  }, 90_000)

  it('a peer that gives a job less memory than the chain lets a task need (4 GiB) is warned at start', async () => {
    const a = peers.get('solverA')!
    const warned = await waitFor(async () => (a.proc.stdout() + a.proc.stderr()).split('\n').find(l => l.includes('chainMaxTaskMemoryMiB')), 20_000, 'the memory warning')
    expect(JSON.parse(warned)).toMatchObject({ level: 40, maxJobMemoryMiB: 2048, chainMaxTaskMemoryMiB: 4096, msg: expect.stringMatching(/hands back .*release fee/) })
    expect(peers.get('solverB')!.proc.stdout() + peers.get('solverB')!.proc.stderr()).not.toMatch(/chainMaxTaskMemoryMiB/)
  })

  // before the task: a task reaches a solver only once verifier_count (2) verifiers can answer for it
  it('switches a running peer\'s roles mid-run: the whistleblower becomes a verifier', async () => {
    const r = await cli('switcher', 'roles', 'set', 'verifier')
    expect(r.roles).toEqual(['verifier'])
    const switcher = peers.get('switcher')!
    await waitFor(async () => ((await observer.node(accountIdOf(switcher.account)))?.roles === 4) || undefined, 20_000, 'roles mirrored on chain')
  })

  it('submits a task; a solver is selected and starts training', async () => {
    const taskFile = join(dir.path, 'task.json')
    const r = await runCli(['task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '150', '--checkpoint-every', '25', '--batch', '32', '--out', taskFile])
    expect(r.code, r.stderr).toBe(0)
    const sub = await runCli(['submit', '--task', taskFile, '--challenge-window', String(CHALLENGE_WINDOW), '--solve-timeout', String(SOLVE_TIMEOUT), '--json', '--data-dir', peers.get('submitter')!.dataDir], 120_000)
    expect(sub.code, sub.stderr).toBe(0)
    taskId = JSON.parse(sub.stdout).taskId
    const task = await waitFor(async () => { const t = await observer.task(taskId); return t?.solver != null ? t : undefined }, 30_000, 'solver selection')
    firstSolver = task.solver!
    expect(task.phase).toBe('Solving')
  }, 180_000)

  it('the selected solver is killed mid-task; after its deadline another solver is selected', async () => {
    const victim = [...peers.entries()].find(([, p]) => p.account === accountOf(firstSolver))
    expect(victim, `selected solver ${firstSolver} is one of ours`).toBeDefined()
    const [name, p] = victim!
    // wait until it is really training, then kill it without warning
    await waitFor(async () => (await cli(name, 'trace', '--role', 'solver')).some((e: any) => workState(e.to) === 'training'), 30_000, 'training started')
    // the training is a job of the peer's scheduler, shown by status (and tasks)
    const jobs = await waitFor(async () => { const j = (await cli(name, 'status')).jobs; return j?.running.length > 0 ? j : undefined }, 20_000, 'the training job in status')
    expect(jobs.limits.maxJobs).toBe(1)
    expect(jobs.running).toEqual([expect.objectContaining({ taskId, kind: 'train', state: 'running' })])
    expect(jobs.running[0].memory).toBeGreaterThan(100 * 2 ** 20)
    expect((await cli(name, 'tasks')).find((r: any) => r.taskId === taskId).jobs).toEqual([expect.stringMatching(/^train running \d+ s$/)])
    p.proc.child.kill('SIGKILL')
    await p.proc.exited
    peers.delete(name)
    // the dead solver's deadline: sealed through
    const t = await sw.sealUntil(async () => { const t = await observer.task(taskId); return t?.solver != null && t.solver !== firstSolver ? t : undefined }, 'replacement solver', SOLVE_TIMEOUT + 50)
    expect(t.excluded).toContain(firstSolver)
    replacement = t.solver!
  }, 180_000)

  it('removing the solver role mid-task does not lose the task: the solver finishes and commits it first', async () => {
    const [name] = [...peers.entries()].find(([, p]) => p.account === accountOf(replacement))!
    await waitFor(async () => (await cli(name, 'trace', '--role', 'solver')).some((e: any) => workState(e.to) === 'training'), 60_000, 'replacement training')
    const r = await cli(name, 'roles', 'remove', 'solver')
    expect(r.roles).toEqual([])
    expect(r.retiring).toEqual([expect.stringMatching(/^solver#/)])
    // within its deadline (SOLVE_TIMEOUT blocks from its selection, in real time)
    const committed = await waitFor(async () => { const t = await observer.task(taskId); return t != null && t.phase !== 'Solving' ? t : undefined }, SOLVE_TIMEOUT * BLOCK_MS + 10_000, 'the proof commitment', 1000)
    expect(committed.solver).toBe(replacement)
    expect(committed.phase).toBe('Verifying')
  }, SOLVE_TIMEOUT * BLOCK_MS + 80_000)

  it('the replacement solver commits, both verifiers accept, and the task settles with payouts', async () => {
    // both verifiers vote (the switched peer among them), then the rest of the challenge window is sealed through
    await waitFor(async () => { const t = await observer.task(taskId); return t != null && t.verdicts.length === 2 }, CHALLENGE_WINDOW * BLOCK_MS + 10_000, 'both verdicts', 1000)
    const settled = await sw.sealUntil(async () => { const t = await observer.task(taskId); return t?.phase === 'Settled' ? t : undefined }, 'settlement', CHALLENGE_WINDOW + 50)
    expect(settled.verdicts.filter(v => v.accept).length).toBe(2)
    // the submitter's task book has it once its peer has read the sealed blocks' events
    const row = await waitFor(async () => (await cli('submitter', 'tasks')).find((x: any) => x.taskId === taskId && x.gossip?.chain?.TaskSettled != null), 60_000, 'TaskSettled in the submitter\'s task book', 1000)
    expect(row.gossip.chain.TaskSettled.success).toBe(true)
    expect(BigInt(row.gossip.chain.TaskSettled.solverPaid)).toBeGreaterThan(0n)
    expect(BigInt(row.gossip.chain.TaskSettled.verifiersPaid)).toBeGreaterThan(0n)
  }, CHALLENGE_WINDOW * BLOCK_MS + 60_000)

  it('traces show each role\'s transitions in order', async () => {
    const solverName = [...peers.entries()].find(([, p]) => p.account === accountOf(replacement))![0]
    const solverTrace = await cli(solverName, 'trace', '--role', 'solver')
    // the solver's `work` region (its `disputes` region runs beside it)
    const st = solverTrace.filter((e: any) => e.kind === 'transition').map((e: any) => workState(e.to))
    expect(subsequence(st, ['idle', 'training', 'committing', 'idle']), `solver work states ${JSON.stringify(st)}`).toBe(true)
    // drained: it retired only once the task settled
    const stopped = solverTrace.find((e: any) => e.kind === 'stopped')
    expect(stopped?.to).toBe('retired')
    expect(stopped?.event).toBe('chain.taskSettled')
    const vt = (await cli('verifier', 'trace', '--role', 'verifier')).filter((e: any) => e.kind === 'transition').map((e: any) => e.to)
    expect(subsequence(vt, ['idle', 'verifying', 'voting', 'idle']), `verifier states ${JSON.stringify(vt)}`).toBe(true)
    const switcherTrace = await cli('switcher', 'trace')
    expect(switcherTrace.some((e: any) => e.role === 'whistleblower' && e.kind === 'stopped')).toBe(true)
    const swv = switcherTrace.filter((e: any) => e.role === 'verifier' && e.kind === 'transition').map((e: any) => e.to)
    expect(subsequence(swv, ['verifying', 'voting', 'idle']), `switched verifier states ${JSON.stringify(swv)}`).toBe(true)
    // the submitter collects the settled task's model and evaluates it in a child process: wait for it to return to idle
    const submitterStates = async (): Promise<string[]> => (await cli('submitter', 'trace', '--role', 'submitter')).filter((e: any) => e.kind === 'transition').map((e: any) => e.to)
    const want = ['idle', 'submitting', 'idle', 'collecting', 'idle']
    let sub = await submitterStates()
    for (let i = 0; i < 60 && !subsequence(sub, want) && sub.at(-1) === 'collecting'; i++) { await new Promise(resolve => setTimeout(resolve, 1000)); sub = await submitterStates() }
    expect(subsequence(sub, want), `submitter states ${JSON.stringify(sub)}`).toBe(true)
    const actors = await cli('submitter', 'status')
    expect(actors.peerId).toBe(peers.get('submitter')!.peerId)
  }, 120_000)
})

// dev accounts by SURI ↔ hex account id
const ACCOUNTS = new Map<string, string>()
function accountIdOf (suri: string): string {
  return ACCOUNTS.get(suri)!
}
function accountOf (hex: string): string | undefined {
  return [...ACCOUNTS.entries()].find(([, h]) => h === hex)?.[0]
}
beforeAll(async () => {
  const { Keyring } = await import('@polkadot/keyring')
  const { u8aToHex } = await import('@polkadot/util')
  const { cryptoWaitReady } = await import('@polkadot/util-crypto')
  await cryptoWaitReady()
  const k = new Keyring({ type: 'sr25519' })
  for (let i = 1; i <= 8; i++) ACCOUNTS.set(`//Peer${i}`, u8aToHex(k.addFromUri(`//Peer${i}`).publicKey))
})

function workState (to: string | undefined): string | undefined {
  return /work\.(\w+)/.exec(to ?? '')?.[1]
}

function subsequence (xs: string[], want: string[]): boolean {
  let i = 0
  for (const x of xs) if (x === want[i]) i++
  return i === want.length
}

void writeFile
