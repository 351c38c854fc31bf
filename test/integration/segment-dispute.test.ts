import { cpSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainClient, ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import { parseNodeFaults, type NodeFaults } from '../../node/dispute/faults.js'
import { contextOf } from '../../node/dispute/dispute-context.js'
import { findShardService } from '../../node/shards/index.js'
import type { Peer } from '../../node/peer.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { decodeSignedBytes, verifySigned } from '../../protocols/dispute/index.js'
import type { ProofOfLearning } from '../../protocols/pol/proof.js'
import { newProgram, programBytes, programHash } from '../../protocols/program/index.js'
import { RUN_INDEX_PREFIX } from '../../protocols/verification/run-index.js'
import { removeDir, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { commitmentsOf, publishRunIndex, trainWithRootEvery } from '../helpers/segment-run.js'
import { sr25519Verify } from '@polkadot/util-crypto'
import { hexToU8a } from '@polkadot/util'

// Segment disputes (docs/disputes.md "Segments") between real peers on
// 127.0.0.1 and the dev chain process over WebSocket: a task whose program
// commits a state root every m = 4 steps of 8. The proofs on disk are made
// from m = 1 runs of the same program (test/helpers/segment-run.ts) until the
// trainer writes m-spaced roots. (a) a solver with a wrong op inside segment 1
// (tamper-op at 1-based step 6) loses: the verifier's node opens segment 1,
// the defender signs its roots inside it, the challenger opens step 5 (the
// first whose post-root differs) and bisects it to one MatMul element; the
// solver is slashed at its reveal deadline. (b) an honest solver disputed at a
// segment by a challenger that never opens a step keeps its stake: its node
// re-runs the segment, signs the honest roots, forces them on chain and wins
// on time. (c) a silent solver is forced for its segment and loses on time.
// (d) a cheating solver that sends an unusable segment off chain (a root left
// out) to make the challenger give up and lose at the deadline: the challenger
// demands the segment on chain, where only the right length is taken, and wins.

// the service from dist/: its engine jobs fork dist/node/engine/engine-server.js
const { DisputeService } = await import('../../dist/node/dispute/service.js' as string) as typeof import('../../node/dispute/service.js')
type DisputeService = InstanceType<typeof DisputeService>

const UNIT = 10n ** 12n
const BLOCK_MS = 100
/** patience before forcing: long for the cooperative parties (a tape takes seconds), short for those meant to force */
const PATIENCE: Record<string, number> = { Dave: 15_000, Eve: 15_000, Peer1: 15_000, Bob: 1000, Ferdie: 1000, Charlie: 1000 }
const M = 4
const STEPS = 8
const TAMPERED = 6 // 1-based, inside segment 1 (steps 5…8)
const ds = syntheticDataset(5, 64, 8)
const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: STEPS, optimizer: 'sgd', batchSize: 4, seed: 3, checkpointEvery: 4, rootEvery: M })

let chain: ChainProcess
let dir: string
const peers: Peer[] = []
const peerOf: Record<string, Peer> = {}
const c: Record<string, ChainClient> = {}
const svc: Record<string, DisputeService> = {}
const faults: Record<string, NodeFaults> = {
  Bob: parseNodeFaults([]),
  Eve: parseNodeFaults([`tamper-op=BatchMatMul@${TAMPERED}`]),
  Ferdie: parseNodeFaults(['silent']),
  Peer1: parseNodeFaults([`tamper-op=BatchMatMul@${TAMPERED}`, 'short-segment']),
  Dave: parseNodeFaults([])
}
let honest: { proof: ProofOfLearning, perStep: ProofOfLearning, dir: string }
let tampered: { proof: ProofOfLearning, dir: string }
const tasks: Record<string, number> = {}

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))
/**
 * A defence run beside the test's own steps: observed at once, so that when a step fails first
 * (and afterAll then closes the chain under it) its rejection is not left unhandled; it is still awaited.
 */
function beside<T> (p: Promise<T>): Promise<T> { p.catch(() => {}); return p }
async function until<T> (f: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    const v = await f()
    if (v !== undefined && v !== false) return v
    await sleep(200)
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Alice submits a task of `program`. */
let commitments: Promise<{ skeletonRoot: string, datasetRoot: string }> | undefined
async function submitted (): Promise<number> {
  const { skeletonRoot, datasetRoot } = await (commitments ??= commitmentsOf(program, ds))
  return Number(await c.Alice.submitTask({
    programHash: '0x' + programHash(program), program: programBytes(program), datasetRoot, skeletonRoot, steps: STEPS, checkpointEvery: 4,
    escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 1200, solveTimeout: 50
  }))
}

/** Task `id` solved by `solver` (others selected first hand it back), its run published and committed. */
async function solvedTask (id: number, solver: string, run: { proof: ProofOfLearning, dir: string }): Promise<number> {
  for (let i = 0; i < 4; i++) {
    const t = await until(async () => { const t = await c.Alice.task(id); return t?.solver != null && t }, 20_000, `a solver for task ${id}`)
    const who = Object.keys(c).find(n => c[n].accountId === t.solver)!
    if (who === solver) break
    await c[who].releaseTask(id)
    await until(async () => (await c.Alice.task(id))?.solver !== t.solver, 20_000, 'the task handed back')
  }
  expect((await c.Alice.task(id))?.solver).toBe(c[solver].accountId)
  const peer = peerOf[solver]
  const runDir = join(peer.opts.dataDir, 'tasks', String(id), 'run')
  mkdirSync(runDir, { recursive: true })
  cpSync(run.dir, runDir, { recursive: true })
  const index = await publishRunIndex(findShardService(peer)!, id, runDir, run.proof)
  await c[solver].commitProof(id, { proofRoot: '0x' + run.proof.proofRoot, finalStateRoot: '0x' + run.proof.finalStateRoot, stepCount: STEPS, checkpoints: [RUN_INDEX_PREFIX + index] })
  return id
}

/** What the solver actor does on DisputeOpened against it: defend() until the dispute ends. */
async function defendOpened (name: string, taskId: number): Promise<void> {
  const id = await until(async () => {
    for (let i = 0; i < 16; i++) { const d = await c.Alice.dispute(i); if (d != null && Number(d.taskId) === taskId) return i }
    return undefined
  }, 60_000, `a dispute of task ${taskId}`)
  await svc[name].defend(taskId, id)
}

beforeAll(async () => {
  dir = await tempDir('ps-segdispute-')
  chain = await startChainProcess(join(dir, 'chain'), ['--block-time', String(BLOCK_MS), '--dispute-clock', '6', '--max-root-every', String(M), '--forced-error-ppm', '0'])
  await initBackend('wasm')
  const perStepDir = join(dir, 'honest-m1')
  const h = await trainWithRootEvery(program, ds, perStepDir, join(dir, 'honest'))
  const { readFileSync } = await import('node:fs')
  honest = { proof: h, perStep: JSON.parse(readFileSync(join(perStepDir, 'proof.json'), 'utf8')) as ProofOfLearning, dir: join(dir, 'honest') }
  tampered = { proof: await trainWithRootEvery(program, ds, join(dir, 'tampered-m1'), join(dir, 'tampered'), { ops: faults.Eve.ops, weights: [] }), dir: join(dir, 'tampered') }
  expect(tampered.proof.stateRoots.slice(0, 2)).toEqual(honest.proof.stateRoots.slice(0, 2))
  expect(tampered.proof.stateRoots[2]).not.toBe(honest.proof.stateRoots[2])
  // Dave (the verifier) is the bootstrap; the solvers join it
  peerOf.Dave = await startShardPeer(join(dir, 'Dave'), [])
  const boot = peerOf.Dave.host.getMultiaddrs()[0].toString()
  for (const n of ['Bob', 'Eve', 'Ferdie', 'Peer1']) peerOf[n] = await startShardPeer(join(dir, n), [boot])
  const names = ['Dave', 'Bob', 'Eve', 'Ferdie', 'Peer1']
  peers.push(...names.map(n => peerOf[n]))
  await Promise.all(['Alice', 'Charlie', ...names].map(async n => { c[n] = await ChainClient.connect({ url: chain.url, signer: `//${n}` }) }))
  await Promise.all(names.map(async n => {
    const p = peerOf[n]
    await c[n].registerNode(p.peerId, n === 'Dave' ? ROLE_VERIFIER : ROLE_SOLVER, 5000n * UNIT, async payload => await p.identity.privateKey.sign(payload))
    svc[n] = new DisputeService({ peer: p, chain: async () => c[n], shards: findShardService(p)!, faults: faults[n], forceAfterMs: PATIENCE[n] })
    await svc[n].start()
  }))
  // Charlie: a verifier quick to force (c); its account also opens a dispute it never plays (b)
  const cp = await startShardPeer(join(dir, 'Charlie'), [boot]); peers.push(cp)
  await c.Charlie.registerNode(cp.peerId, ROLE_VERIFIER, 5000n * UNIT, async payload => await cp.identity.privateKey.sign(payload))
  svc.Charlie = new DisputeService({
    peer: cp, chain: async () => c.Charlie, shards: findShardService(cp)!, faults: parseNodeFaults([]), forceAfterMs: PATIENCE.Charlie
  })
  await svc.Charlie.start()
  const ids = [await submitted(), await submitted(), await submitted(), await submitted()]
  ;[tasks.cheat, tasks.honest, tasks.silent, tasks.short] = await Promise.all([
    solvedTask(ids[0], 'Eve', tampered), solvedTask(ids[1], 'Bob', honest), solvedTask(ids[2], 'Ferdie', tampered), solvedTask(ids[3], 'Peer1', tampered)
  ])
  for (const id of Object.values(tasks)) expect(await c.Alice.rootEvery(id)).toBe(M)
}, 120_000)

afterAll(async () => {
  for (const x of Object.values(c)) await x.disconnect().catch(() => {})
  await Promise.all(peers.map(async p => await p.stop().catch(() => {})))
  await chain?.stop()
  await removeDir(dir)
})

describe('segment disputes between real peers on the dev chain (rootEvery 4)', () => {
  it.concurrent('(a) a wrong op inside a segment: narrowed through the segment to one element, adjudicated, the solver slashed', async () => {
    const id = tasks.cheat
    const stake = (await c.Eve.node())!.stake
    const defending = beside(defendOpened('Eve', id))
    // the verifier found the committed step 8 (leaf 2) wrong: the segment 5…8 is disputed
    const r = await svc.Dave.challenge(id, 'solver', 8)
    expect(r.winner).toBe('challenger')
    expect(r.reason).toMatch(/^element claim/)
    const d = (await c.Alice.dispute(r.disputeId))!
    expect(d.disputedStep).toBe(1)
    expect(d.moves).toBe(0) // cooperative: nothing but the opening and the claim on chain
    const ruling = (await c.Alice.task(id))!.rulings.find(x => Number(x.disputeId) === r.disputeId)!
    expect(ruling.step).toBe(TAMPERED - 1)
    const rec = svc.Dave.finished.find(x => x.disputeId === r.disputeId)!
    expect(rec.narrowing!.length).toBeGreaterThan(0)
    // no forced error to reveal: slashed at the reveal deadline
    await until(async () => (await c.Alice.task(id))!.rulings.find(x => Number(x.disputeId) === r.disputeId)!.outcome === 'SolverPenalized', 30_000, 'the penalty')
    expect((await c.Eve.node())!.stake).toBeLessThan(stake)
    await defending
  }, 60_000)

  it.concurrent('(b) an honest solver challenged at a segment keeps its stake: it signs its honest roots, forces them and wins on time', async () => {
    const id = tasks.honest
    const stake = (await c.Bob.node())!.stake
    const disputeId = Number(await c.Charlie.openDispute(id, c.Bob.accountId, 'SolverProof', 1))
    const defended = beside(svc.Bob.defend(id, disputeId))
    // what the defender forces on chain: its segment, the states after steps 5, 6, 7 of the honest run
    const last = await until(async () => await c.Alice.disputeLastMove(disputeId) ?? undefined, 30_000, 'the segment forced on chain')
    const r = await defended
    expect(r.winner).toBe('defender')
    const seg = verifySigned(decodeSignedBytes(last!), hexToU8a(c.Bob.accountId), (m, s, p) => sr25519Verify(m, s, p), contextOf(c.Alice, id, disputeId, M))
    if (seg.t !== 'segment') throw new Error(`expected the segment on chain, got ${seg.t}`)
    expect(seg.j).toBe(1)
    expect(seg.roots.map(x => Buffer.from(x).toString('hex'))).toEqual(honest.perStep.stateRoots.slice(5, 8))
    expect((await c.Bob.node())!.stake).toBe(stake)
    expect((await c.Alice.dispute(disputeId))!.status).toBe('DefenderWon')
  }, 60_000)

  it.concurrent('(c) a silent solver is forced for its segment and loses on time', async () => {
    const id = tasks.silent
    const stake = (await c.Ferdie.node())!.stake
    const defending = beside(defendOpened('Ferdie', id))
    const r = await svc.Charlie.challenge(id, 'solver', 8)
    expect(r.winner).toBe('challenger')
    expect(r.reason).toMatch(/timeout/)
    const d = (await c.Alice.dispute(r.disputeId))!
    expect(d.disputedStep).toBe(1)
    expect(d.status).toBe('ChallengerWon')
    expect((await c.Ferdie.node())!.stake).toBeLessThan(stake)
    await defending
  }, 60_000)

  it.concurrent('(d) a defender that sends a segment of the wrong length off chain, hoping the challenger gives up, is made to post its real one and loses', async () => {
    const id = tasks.short
    const stake = (await c.Peer1.node())!.stake
    const defending = beside(defendOpened('Peer1', id))
    const r = await svc.Dave.challenge(id, 'solver', 8)
    expect(r.winner).toBe('challenger')
    expect(r.reason).toMatch(/^element claim/)
    const d = (await c.Alice.dispute(r.disputeId))!
    expect(d.moves).toBe(1) // the segment, demanded on chain
    await until(async () => (await c.Alice.task(id))!.rulings.find(x => Number(x.disputeId) === r.disputeId)!.outcome === 'SolverPenalized', 30_000, 'the penalty')
    expect((await c.Peer1.node())!.stake).toBeLessThan(stake)
    await defending
  }, 60_000)
})
