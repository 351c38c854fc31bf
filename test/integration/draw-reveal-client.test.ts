import { describe, expect, it } from 'vitest'
import { ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import { DrawRevealer } from '../../node/dispute/draw-revealer.js'
import { createLogger } from '../../node/log.js'
import { merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { newProgram } from '../../protocols/program/index.js'
import { clientSample } from '../helpers/verdict-sample.js'
import { chainClients } from './chain-clients.js'
import { testPeer } from '../helpers/peer-key.js'

// The draw at settlement over the dev chain process (metadata, SCALE, the
// node's client): on a chain where every draw orders a forced error, a
// verified task waits for its solver's draw (DrawRequests, DrawRequested);
// the solver node's revealer sends reveal_draw and the task settles, the
// jackpot out of the solver's reward.

const UNIT = 10n ** 12n
const R = 500n * UNIT
const J = 200n * UNIT

const c = chainClients('ps-draw-reveal-', ['Alice', 'Bob', 'Dave'], ['--instant-seal', '--forced-error-ppm', '1000000'])

describe('the draw revealed at settlement, over the dev chain', () => {
  it('the chain asks for the draw once the task is verified; the solver node reveals it and is paid R − J', async () => {
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ab'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
    const program = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'sgd', batchSize: 8, seed: 3, checkpointEvery: 2 })
    const roots = [0, 1, 2, 3, 4].map(i => toHex(sha256(Uint8Array.of(i))))
    const keys = { Bob: testPeer('BobDraw'), Dave: testPeer('DaveDraw') }
    await c.Bob.registerNode(keys.Bob.peerId, ROLE_SOLVER, 2000n * UNIT, keys.Bob.sign)
    await c.Dave.registerNode(keys.Dave.peerId, ROLE_VERIFIER, 2000n * UNIT, keys.Dave.sign)
    const bytes = new TextEncoder().encode(canonicalJson(program))
    const id = await c.Alice.submitTask({ programHash: '0x' + toHex(sha256(bytes)), program: bytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2, escrow: 1000n * UNIT, solverReward: R, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 30, solveTimeout: 50 })
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    const bob = await c.Bob.balance()
    await c.Bob.commitProof(id, { proofRoot: '0x' + toHex(merkleRoot(roots.map(r => Buffer.from(r, 'hex')))), finalStateRoot: '0x' + roots[4], stepCount: 4, checkpoints: [] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    await c.Dave.submitVerdict(id, true, await clientSample(c.Dave, id))
    for (let i = 0; i < 60 && await c.Alice.drawRequest(id) == null; i++) await block()
    const request = await c.Alice.drawRequest(id)
    expect(request).toMatchObject({ revealed: false, forcedStep: null, forcedSteps: [] })
    expect(request!.deadline).toBeGreaterThan(await c.Alice.bestNumber())
    expect((await c.Alice.task(id))?.phase).toBe('Verifying')
    // the solver's node, as after a restart: it finds the open request on chain
    const revealer = new DrawRevealer({ chain: async () => c.Bob, log: createLogger('test', { level: 'silent' }) })
    await revealer.catchUp()
    for (let i = 0; i < 100 && revealer.revealed.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 100))
    expect(revealer.revealed).toHaveLength(1)
    expect(revealer.revealed[0].forcedStep).toEqual(expect.any(Number))
    // every forced step the draw ordered, as the node computes them from its own VRF
    const { forcedSteps } = revealer.revealed[0]
    expect(forcedSteps.length).toBeGreaterThanOrEqual(1)
    expect(forcedSteps[0]).toBe(revealer.revealed[0].forcedStep)
    expect(await c.Alice.drawRequest(id)).toMatchObject({ revealed: true, forcedStep: forcedSteps[0], forcedSteps })
    for (let i = 0; i < 5 && (await c.Alice.task(id))?.phase === 'Verifying'; i++) await block()
    expect((await c.Alice.task(id))?.phase).toBe('Settled')
    expect(await c.Alice.drawRequest(id)).toBeNull()
    const after = await c.Bob.balance()
    expect(after.free + after.reserved - bob.free - bob.reserved).toBe(R - J)
  }, 90_000)
})
