import { describe, expect, it } from 'vitest'
import { ChainError, ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import { merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { initialState } from '../../protocols/program/init.js'
import { newProgram } from '../../protocols/program/index.js'
import { initClaimBytes } from '../../node/roles/initial-state.js'
import { chainClients } from './chain-clients.js'
import { testPeer } from '../helpers/peer-key.js'

// challenge_initial_state through the node's client and the dev chain process
// (metadata, SCALE, events): a solver whose state root 0 is not the program's
// initialisation is convicted by the claim the verifier node builds.

const UNIT = 10n ** 12n

const c = chainClients('ps-init-client-', ['Alice', 'Bob', 'Dave'])

describe('challenge_initial_state over the dev chain', () => {
  it('the verifier\'s claim convicts a solver that started from another state', async () => {
    const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ab'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
    const program = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'sgd', batchSize: 8, seed: 3, checkpointEvery: 2 })
    const cheat = initialState(program).map((t, i) => i === 1 ? { ...t, values: t.values.map((v, k) => k === 5 ? 0.25 : v) } : t) as TensorData[]
    const roots = [toHex(stateRoot(cheat, 0)), ...[1, 2, 3, 4].map(i => toHex(sha256(Uint8Array.of(i))))]
    const bobKey = testPeer('BobInit'); const daveKey = testPeer('DaveInit')
    await c.Bob.registerNode(bobKey.peerId, ROLE_SOLVER, 2000n * UNIT, bobKey.sign)
    await c.Dave.registerNode(daveKey.peerId, ROLE_VERIFIER, 2000n * UNIT, daveKey.sign)
    const id = await c.Alice.submitTask({ programHash: '0x' + toHex(sha256(new TextEncoder().encode(canonicalJson(program)))), program: new TextEncoder().encode(canonicalJson(program)), datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 30, solveTimeout: 50 })
    await c.Alice.api.rpc.engine.createBlock(true, true)
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    await c.Bob.commitProof(id, { proofRoot: '0x' + toHex(merkleRoot(roots.map(r => Buffer.from(r, 'hex')))), finalStateRoot: '0x' + roots[4], stepCount: 4, checkpoints: [] })
    const stake = (await c.Bob.node())!.stake
    // the honest state is not what Bob committed: refused, nothing reserved
    const refused = await c.Dave.challengeInitialState(id, initClaimBytes(program, [toHex(stateRoot(initialState(program), 0)), ...roots.slice(1)], cheat)).then(() => 'ok', (e: unknown) => e instanceof ChainError ? e.error : String(e))
    expect(refused).toBe('arbitration.InvalidProof')
    const r = await c.Dave.challengeInitialState(id, initClaimBytes(program, roots, cheat))
    expect(r.solverWrong).toBe(true)
    expect(r.slashed).toBeGreaterThan(0n)
    expect(r.reason).toMatch(/element 5 of dense1\/bias/)
    expect((await c.Bob.node())!.stake).toBe(stake - r.slashed)
    expect((await c.Alice.task(id))?.solverFailed).toBe(true)
  }, 60_000)
})
