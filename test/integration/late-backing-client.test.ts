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

// The backing grace over the dev chain process (metadata, SCALE, the node's
// client): an assigned verifier rejects in the challenge window's last block
// and backs its reject with its own initial-state claim three blocks after
// the window, while a whistleblower's claim is refused there. Its verdict
// stands and is paid; the task fails.

const UNIT = 10n ** 12n
const V = 100n * UNIT
const errorOf = async (p: Promise<unknown>): Promise<string> => await p.then(() => 'ok', (e: unknown) => e instanceof ChainError ? e.error : String(e))

const c = chainClients('ps-late-backing-', ['Alice', 'Bob', 'Dave', 'Eve'])

describe('a reject backed after the challenge window, over the dev chain', () => {
  it('the assigned verifier\'s late claim is heard and its reject paid; a whistleblower\'s is refused', async () => {
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ab'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
    const program = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'sgd', batchSize: 8, seed: 3, checkpointEvery: 2 })
    const cheat = initialState(program).map((t, i) => i === 1 ? { ...t, values: t.values.map((v, k) => k === 5 ? 0.25 : v) } : t) as TensorData[]
    const roots = [toHex(stateRoot(cheat, 0)), ...[1, 2, 3, 4].map(i => toHex(sha256(Uint8Array.of(i))))]
    const claim = initClaimBytes(program, roots, cheat)
    const keys = { Bob: testPeer('BobLate'), Dave: testPeer('DaveLate'), Eve: testPeer('EveLate') }
    await c.Bob.registerNode(keys.Bob.peerId, ROLE_SOLVER, 2000n * UNIT, keys.Bob.sign)
    await c.Dave.registerNode(keys.Dave.peerId, ROLE_VERIFIER, 2000n * UNIT, keys.Dave.sign)
    // Eve only watches: a whistleblower, never drawn
    await c.Eve.registerNode(keys.Eve.peerId, 8, 2000n * UNIT, keys.Eve.sign)
    const bytes = new TextEncoder().encode(canonicalJson(program))
    const id = await c.Alice.submitTask({ programHash: '0x' + toHex(sha256(bytes)), program: bytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: V, verifierCount: 1, challengeWindow: 30, solveTimeout: 50 })
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    const { challengeEnd } = await c.Bob.commitProof(id, { proofRoot: '0x' + toHex(merkleRoot(roots.map(r => Buffer.from(r, 'hex')))), finalStateRoot: '0x' + roots[4], stepCount: 4, checkpoints: [] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    expect(await c.Dave.myAssignment(id)).not.toBeNull()
    // each transaction seals its own block: the reject lands in block challengeEnd
    for (let i = 0; i < 60 && await c.Alice.bestNumber() < challengeEnd - 1; i++) await block()
    expect(await c.Alice.bestNumber()).toBe(challengeEnd - 1)
    const dave = await c.Dave.balance()
    await c.Dave.submitVerdict(id, false, [])
    for (let i = 0; i < 3; i++) await block()
    expect(await c.Alice.bestNumber()).toBeGreaterThan(challengeEnd)
    // before: arbitration.ChallengeWindowClosed for both
    expect(await errorOf(c.Eve.challengeInitialState(id, claim))).toBe('arbitration.ChallengeWindowClosed')
    const r = await c.Dave.challengeInitialState(id, claim)
    expect(r.solverWrong).toBe(true)
    expect((await c.Dave.myAssignment(id))?.backed).toBe(true)
    for (let i = 0; i < 10 && (await c.Alice.task(id))?.phase === 'Verifying'; i++) await block()
    const t = await c.Alice.task(id)
    expect(t?.phase).toBe('Failed')
    expect(t?.verdicts.find(v => v.verifier === c.Dave.accountId)?.void).toBe(false)
    // its reward, and its share of the solver's slash; its bond back
    const after = await c.Dave.balance()
    expect(after.free + after.reserved - dave.free - dave.reserved).toBeGreaterThanOrEqual(V)
    expect((await c.Dave.node())!.stake).toBe(2000n * UNIT)
  }, 90_000)
})
