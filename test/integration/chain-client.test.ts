import { describe, expect, it } from 'vitest'
import { ChainError, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER, type ChainEvent } from '../../node/chain/client.js'
import { hexToU8a } from '@polkadot/util'
import { encodeSigned } from '../../protocols/dispute/index.js'
import { h32, signed } from '../helpers/dispute-msgs.js'
import { clientSample } from '../helpers/verdict-sample.js'
import { taskProgram } from '../helpers/program.js'
import { chainClients } from './chain-clients.js'
import { testPeer } from '../helpers/peer-key.js'

// The node's typed client drives every Arbitration call against the dev chain process.

const UNIT = 10n ** 12n
const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const P1 = taskProgram({ steps: 8, checkpointEvery: 4 })
const P2 = taskProgram({ steps: 8, checkpointEvery: 4, seed: 4 })

async function advance (n: number): Promise<void> {
  for (let i = 0; i < n; i++) await c.Alice.api.rpc.engine.createBlock(true, true)
}
async function err (p: Promise<unknown>): Promise<string> {
  try { await p } catch (e) { if (e instanceof ChainError) return e.error; throw e }
  return 'ok'
}

const c = chainClients('ps-chain-client-', ['Alice', 'Bob', 'Dave', 'Eve'])

describe('ChainClient over the dev chain', () => {
  it('runs a task from registration to dispute and settlement', async () => {
    const events: ChainEvent[] = []
    const un = await c.Alice.onEvents(e => events.push(e))
    expect(await err(c.Bob.addStake(1n))).toBe('arbitration.NotRegistered')
    await c.Bob.registerNode(testPeer('12D3KooWBobPeer').peerId, ROLE_SOLVER, 2000n * UNIT, testPeer('12D3KooWBobPeer').sign)
    expect(await err(c.Eve.registerNode(testPeer('12D3KooWBobPeer').peerId, ROLE_VERIFIER, 2000n * UNIT, testPeer('12D3KooWBobPeer').sign))).toBe('arbitration.PeerIdTaken')
    await c.Dave.registerNode(testPeer('12D3KooWDavePeer').peerId, ROLE_VERIFIER, 2000n * UNIT, testPeer('12D3KooWDavePeer').sign)
    await c.Eve.registerNode(testPeer('12D3KooWEvePeer').peerId, ROLE_VERIFIER | ROLE_WHISTLEBLOWER, 1500n * UNIT, testPeer('12D3KooWEvePeer').sign)
    await c.Eve.addStake(500n * UNIT)
    // a whistleblower only: Dave is the one verifier the chain can draw
    await c.Eve.setRoles(ROLE_WHISTLEBLOWER)
    expect((await c.Eve.node())?.stake).toBe(2000n * UNIT)
    expect(await c.Alice.peerOwner(testPeer('12D3KooWBobPeer').peerId)).toBe(c.Bob.accountId)

    // a program the chain cannot adjudicate (tfjs-cpu has no reference for most of its kernels) is refused
    const cpu = taskProgram({ steps: 8, checkpointEvery: 4, runtime: 'tfjs-cpu@4.22.0' })
    expect(await err(c.Alice.submitTask({ programHash: cpu.programHash, program: cpu.bytes, datasetRoot: H(2), skeletonRoot: H(3), steps: 8, checkpointEvery: 4, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 30, solveTimeout: 50 }))).toBe('arbitration.ProgramNotVerifiable')
    // one verifier: Dave is the only one whose stake can answer for it (a task reaches a solver only then)
    const id = await c.Alice.submitTask({
      programHash: P1.programHash, program: P1.bytes, datasetRoot: H(2), skeletonRoot: H(3), steps: 8,
      checkpointEvery: 4, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT,
      verifierCount: 1, challengeWindow: 30, solveTimeout: 50
    })
    expect(id).toBe(0n)
    await advance(1)
    let t = await c.Alice.task(id)
    expect(t?.phase).toBe('Solving')
    expect(t?.solver).toBe(c.Bob.accountId)
    // a program without rootEvery: the chain stores no TaskRootEvery, the client reads m = 1
    expect(await c.Alice.rootEvery(id)).toBe(1)
    // release and get it back (Bob is the only solver: after release nobody is available)
    await c.Bob.releaseTask(id)
    expect((await c.Alice.task(id))?.phase).toBe('Unassigned')
    await c.Bob.unregister()
    await c.Bob.registerNode(testPeer('12D3KooWBobPeer').peerId, ROLE_SOLVER, 2000n * UNIT, testPeer('12D3KooWBobPeer').sign)
    // Bob is excluded from task 0 now; a new task goes to him
    const id2 = await c.Alice.submitTask({
      programHash: P2.programHash, program: P2.bytes, datasetRoot: H(2), skeletonRoot: H(3), steps: 8,
      checkpointEvery: 4, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT,
      verifierCount: 1, challengeWindow: 100, solveTimeout: 50
    })
    await advance(1)
    t = await c.Alice.task(id2)
    expect(t?.solver).toBe(c.Bob.accountId)
    expect(await err(c.Dave.commitProof(id2, { proofRoot: H(9), finalStateRoot: H(8), stepCount: 8, checkpoints: [] }))).toBe('arbitration.NotSelectedSolver')
    const { randomnessBlock, challengeEnd } = await c.Bob.commitProof(id2, { proofRoot: H(9), finalStateRoot: H(8), stepCount: 8, checkpoints: ['bafyckpt0', 'bafyckpt1'] })
    expect(challengeEnd).toBeGreaterThan(randomnessBlock)
    await advance(1)
    expect(await c.Dave.randomness(randomnessBlock)).toMatch(/^0x[0-9a-f]{64}$/)
    // an accepting verdict lists Dave's own sample (the whole 8-step run here: 44 steps for a lone verifier); it is the quorum of one
    // the chain drew Dave, the only verifier, in the block after the randomness block
    expect(await c.Eve.myAssignment(id2)).toBeNull()
    const sample = await clientSample(c.Dave, id2)
    expect(sample).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(await err(c.Dave.submitVerdict(id2, true, [0, 5]))).toBe('arbitration.SampleNotChecked')
    await c.Dave.submitVerdict(id2, true, sample)
    expect(await err(c.Dave.submitVerdict(id2, true, sample))).toBe('arbitration.AlreadyVoted')
    // the draw is in storage, through the pallet view the node uses: Dave, round 0, seeded by the randomness block
    const drawn = await c.Alice.assignments(id2)
    expect(drawn?.verifiers.map(v => [v.verifier, v.round, v.seedBlock, v.status])).toEqual([[c.Dave.accountId, 0, randomnessBlock, 'Active']])
    expect((await c.Dave.myAssignment(id2))?.deadline).toBe(challengeEnd)
    expect(events.some(e => e.method === 'VerifiersAssigned' && (e.data.verifiers as string[]).includes(c.Dave.accountId))).toBe(true)

    // Eve challenges the solver and demands its commit on chain; Bob posts it, then forces it
    // on Eve, who stays silent and loses when the response window passes
    const did = await c.Eve.openDispute(id2, c.Bob.accountId, 'SolverProof', 3)
    expect((await c.Alice.dispute(did))?.force).toBeNull()
    await c.Eve.forceMove(did, new Uint8Array(), new Uint8Array())
    expect((await c.Alice.dispute(did))?.force).toMatchObject({ to: 'Defender', seq: 0 })
    // signed over the chain's genesis hash (as polkadot.js reports it), the task and the dispute
    const ctx = { genesis: hexToU8a(c.Bob.genesisHash), taskId: Number(id2), disputeId: Number(did) }
    const commit = signed('Bob', ctx, { t: 'commit', d: Number(did), step: 3, traceRoot: h32(7), depth: 3 })
    expect(await err(c.Bob.answerMove(did, encodeSigned(signed('Bob', { ...ctx, genesis: h32(0x22) }, { t: 'commit', d: Number(did), step: 3, traceRoot: h32(7), depth: 3 }))))).toBe('arbitration.InvalidMove')
    await c.Bob.answerMove(did, encodeSigned(commit))
    expect(await err(c.Bob.answerMove(did, encodeSigned(commit)))).toBe('arbitration.NotAddressee')
    expect(Buffer.from((await c.Alice.disputeLastMove(did))!).toString('hex')).toBe(Buffer.from(encodeSigned(commit)).toString('hex'))
    // a claim that is not a dispute claim (protocols/dispute) is refused with a clear module error
    expect(await err(c.Eve.adjudicate(did, Uint8Array.of(1, 2, 3)))).toBe('arbitration.InvalidClaim')
    expect(await err(c.Dave.claimTimeout(did))).toBe('arbitration.NotExpired')
    const params = await c.Alice.params()
    const { seq, due } = await c.Bob.forceMove(did, new Uint8Array(), encodeSigned(commit))
    expect(seq).toBe(1)
    await advance(due - await c.Alice.bestNumber())
    const bobFree = (await c.Bob.balance()).free
    await c.Dave.claimTimeout(did)
    expect((await c.Alice.dispute(did))?.status).toBe('DefenderWon')
    expect((await c.Eve.node())?.activeTasks).toBe(0)

    expect((await c.Alice.task(id2))?.phase).toBe('Verifying')
    const now = await c.Alice.bestNumber()
    await advance(Math.max(0, challengeEnd - now + 1))
    t = await c.Alice.task(id2)
    expect(t?.phase).toBe('Settled')
    expect((await c.Bob.balance()).free - bobFree).toBe(500n * UNIT + params.disputeBond / 2n) // reward + half of Eve's bond
    // the subscription reads each block's events in order; let it catch up
    for (let i = 0; i < 100 && !events.some(e => e.method === 'TaskSettled'); i++) await new Promise(r => setTimeout(r, 100))
    un()
    const names = events.map(e => `${e.section}.${e.method}`)
    for (const n of ['arbitration.NodeRegistered', 'arbitration.SolverSelected', 'arbitration.ProofCommitted', 'arbitration.DisputeOpened', 'arbitration.DisputeResolved', 'arbitration.TaskSettled']) expect(names).toContain(n)
    expect(events.find(e => e.method === 'TaskSettled')?.data.taskId).toBe(id2)
  })
})
