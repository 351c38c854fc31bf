import { describe, expect, it } from 'vitest'
import { ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import { assembleServe, buildServeParts, MAX_SERVE_PART_BYTES } from '../../protocols/availability/index.js'
import { merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { newProgram } from '../../protocols/program/index.js'
import { clientSample } from '../helpers/verdict-sample.js'
import { testPeer } from '../helpers/peer-key.js'
import { chainClients } from './chain-clients.js'

// Serving a challenged checkpoint through the dev chain process (metadata,
// SCALE, 1 MiB extrinsics over RPC, the node's client): the assigned verifier
// cannot fetch checkpoint 2, rejects and challenges; the solver serves the
// devnet-sized state (1.22 MB: the MLP 784-128-10 with Adam slots) in two
// parts; the verifier reads them back from the blocks' events, rebuilds the
// committed state, its reject withdrawn, votes accept and is paid.

const UNIT = 10n ** 12n
const V = 100n * UNIT

const c = chainClients('ps-serve-', ['Alice', 'Bob', 'Dave'])

function tensor (shape: number[], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  return { shape, dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 1000 + i)) }
}

describe('an availability challenge answered by serving the checkpoint on chain, over the dev chain', () => {
  it('the solver serves 1.22 MB in two parts; the verifier rebuilds the state from the events and votes again', async () => {
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ab'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
    const program = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'sgd', batchSize: 8, seed: 3, checkpointEvery: 2 })
    const state = [[784, 128], [128], [128, 10], [10]].flatMap((s, i) => [tensor(s, 10 + i), tensor(s, 20 + i), tensor(s, 30 + i)])
    const leaves = [0, 1, 2, 3, 4].map(s => s === 2 ? stateRoot(state, 2) : sha256(Uint8Array.of(s)))
    const keys = { Bob: testPeer('BobServe'), Dave: testPeer('DaveServe') }
    await c.Bob.registerNode(keys.Bob.peerId, ROLE_SOLVER, 2000n * UNIT, keys.Bob.sign)
    await c.Dave.registerNode(keys.Dave.peerId, ROLE_VERIFIER, 2000n * UNIT, keys.Dave.sign)
    const bytes = new TextEncoder().encode(canonicalJson(program))
    const id = await c.Alice.submitTask({ programHash: '0x' + toHex(sha256(bytes)), program: bytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: V, verifierCount: 1, challengeWindow: 30, solveTimeout: 50 })
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    const proofRoot = '0x' + toHex(merkleRoot(leaves))
    await c.Bob.commitProof(id, { proofRoot, finalStateRoot: '0x' + toHex(leaves[4]), stepCount: 4, checkpoints: [] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    expect(await c.Dave.myAssignment(id)).not.toBeNull()
    const dave = await c.Dave.balance()
    // Dave cannot fetch checkpoint 2: a reject backed by an availability challenge
    await c.Dave.submitVerdict(id, false, [])
    // (in the call a verifier missing several checkpoints uses: one id per checkpoint, from the events)
    const cids = await c.Dave.challengeAvailabilityMany(id, [2])
    expect(cids).toHaveLength(1)
    const cid = cids[0]
    // Bob serves it, part by part (each part its own block here)
    const parts = buildServeParts(state, 2, leaves)
    expect(parts).toHaveLength(2)
    expect(Math.max(...parts.map(p => p.length))).toBeLessThanOrEqual(MAX_SERVE_PART_BYTES)
    for (const p of parts) await c.Bob.respondAvailability(cid, p)
    expect((await c.Dave.availabilityChallenge(cid))?.status).toBe('Answered')
    expect((await c.Dave.servedCheckpoints(id)).get(2)).toBe(Number(cid))
    // Dave reads the serve back from the chain: the committed state, bit for bit, and every root of the proof
    const read = await c.Dave.servedParts(cid)
    expect(read.map(p => p.length)).toEqual(parts.map(p => p.length))
    const back = assembleServe({ proofRoot: merkleRoot(leaves), step: 2, stepCount: 4 }, read)
    expect(back.tensors.every((t, i) => Buffer.from(t.values.buffer).equals(Buffer.from(state[i].values.buffer)))).toBe(true)
    expect(back.roots.map(toHex)).toEqual(leaves.map(toHex))
    // his reject was withdrawn: he votes again, and his accept stands
    const mine = await c.Dave.myAssignment(id)
    expect(mine?.backed).toBe(false)
    expect((await c.Dave.task(id))?.verdicts.some(v => v.verifier === c.Dave.accountId)).toBe(false)
    await c.Dave.submitVerdict(id, true, await clientSample(c.Dave, id))
    for (let i = 0; i < 60 && (await c.Alice.task(id))?.phase === 'Verifying'; i++) await block()
    expect((await c.Alice.task(id))?.phase).toBe('Settled')
    // paid V, his deposit back
    const after = await c.Dave.balance()
    expect(after.free + after.reserved - dave.free - dave.reserved).toBe(V)
  }, 120_000)
})
