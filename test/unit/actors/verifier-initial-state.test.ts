import { describe, expect, it } from 'vitest'
import { createActor, waitFor } from 'xstate'
import { nodeSupervisor } from '../../../actors/index.js'
import { verifierPorts } from '../../helpers/verifier-ports.js'
import { sha256, toHex } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import { canonicalBytes, type TensorData } from '../../../protocols/commit/tensor.js'
import { decodeInitClaim, judgeInitClaim } from '../../../protocols/dispute/init-claim.js'
import { merkleRoot } from '../../../protocols/commit/merkle.js'
import { canonicalJson } from '../../../protocols/program/canonical-json.js'
import { initialState } from '../../../protocols/program/init.js'
import { newProgram } from '../../../protocols/program/index.js'
import { initClaimBytes, initialStateMatches, stateFromCheckpoint } from '../../../node/roles/initial-state.js'

// The verifier's side of the initial state: it compares stateRoots[0] with the
// program's, reads the solver's checkpoint 0 by the program's layout, builds a
// claim the chain's rule accepts, and its role machine does not start a
// bisection game after an initial-state ruling.

const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ef'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
const program = newProgram({ model: 'cnn', dataset, steps: 3, optimizer: 'adam', batchSize: 8, seed: 77, checkpointEvery: 3 })
const stateBin = (s: TensorData[]): Uint8Array => Buffer.concat(s.map(t => canonicalBytes(t)))

describe('verifier: initial state', () => {
  it('an honest proof passes the comparison; a changed element is found in checkpoint 0 and claimed', () => {
    const honest = initialState(program)
    expect(initialStateMatches(program, toHex(stateRoot(honest, 0)))).toEqual({ ok: true })
    const cheat = honest.map((t, i) => i === 2 ? { ...t, values: t.values.map((v, k) => k === 700 ? v / 2 : v) } : t) as TensorData[]
    const roots = [toHex(stateRoot(cheat, 0)), ...[1, 2, 3].map(i => toHex(sha256(Uint8Array.of(i))))]
    expect(initialStateMatches(program, roots[0])).toEqual({ ok: false })
    const read = stateFromCheckpoint(program, stateBin(cheat), roots[0])
    if (typeof read === 'string') throw new Error(read)
    const claim = decodeInitClaim(initClaimBytes(program, roots, read))
    expect(claim.t).toBe(2)
    expect(claim.flat).toBe(700)
    const env = { programHash: sha256(new TextEncoder().encode(canonicalJson(program))), proofRoot: merkleRoot(roots.map(r => Buffer.from(r, 'hex'))), stepCount: 3 }
    expect(judgeInitClaim(env, claim).winner).toBe('challenger')
    // a checkpoint of another size, or not the committed state, is a data-availability matter
    expect(stateFromCheckpoint(program, stateBin(cheat).subarray(4), roots[0])).toMatch(/bytes/)
    expect(stateFromCheckpoint(program, stateBin(honest), roots[0])).toMatch(/does not hash/)
  })

  it('after an initial-state ruling the verifier votes reject and opens no bisection', async () => {
    const calls: string[] = []
    const p = verifierPorts(async () => ({ accept: false, checkedSteps: [], initialState: { solverWrong: true, reason: 'element 700' } }), calls)
    const a = createActor(nodeSupervisor, { input: { roles: ['verifier'], roleInput: p } }).start()
    a.send({ type: 'chain.verifiersAssigned', taskId: 1, forMe: true })
    const child = (): any => (a.getSnapshot().children as any)[a.getSnapshot().context.active.verifier as string]
    await waitFor(child(), s => s.context.history.length === 1, { timeout: 1000 })
    expect(calls).toEqual(['verdict 1 false'])
    expect(child().getSnapshot().context.history[0].outcome).toBe('dispute -1: challenger won')
  })
})
