import { u8aToHex } from '@polkadot/util'
import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { NodeInfo, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { merkleRoot, sha256 } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { buildInitClaim, encodeInitClaim } from '../../protocols/dispute/init-claim.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { initialState } from '../../protocols/program/init.js'
import { newProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { assignedNames, harnessSample } from '../helpers/verdict-sample.js'
import { commitCall, saltOf } from '../helpers/challenge-commit.js'
import { Harness } from '../unit/chain/harness.js'

// Copied initial-state claims. A claim does not name its caller and the pool
// is public (author_pendingExtrinsics): a watcher can submit an assigned
// verifier's pending claim bytes as its own and have them included first.
// Before, the verifier's own claim was then refused (SolverAlreadyFailed), its
// reject had no evidence of its own and was voided at the window's close: it
// lost its reward V for a check it did. Now an assigned verifier whose reject
// is not yet backed may still post its claim after the solver failed; a right
// one backs its reject (bond back, nothing slashed twice). The test fails if
// the verifier loses its reward, or if anybody else may still claim late.

const STAKE = 2000n * UNIT
const V = 100n * UNIT
const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'cd'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
const PROGRAM = newProgram({ model: 'mlp', dataset, steps: 4, optimizer: 'adam', batchSize: 8, seed: 21, checkpointEvery: 2 })
const BYTES = new TextEncoder().encode(canonicalJson(PROGRAM))
// a solver that starts from a state of its choosing: one weight changed
const CHEAT = initialState(PROGRAM).map((t, i) => i === 0 ? { ...t, values: t.values.map((v, k) => k === 4321 ? v + 0.5 : v) } : t) as TensorData[]
const ROOTS = [stateRoot(CHEAT, 0), ...[1, 2, 3, 4].map(i => sha256(Uint8Array.of(i)))]
const claim = (flat: number): string => u8aToHex(encodeInitClaim(buildInitClaim({ program: BYTES, stateRoots: ROOTS, state: CHEAT, t: 0, flat })))
const RIGHT = claim(4321)

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0) as TaskInfo
const worth = (n: string): bigint => h.free(n) + h.reserved(n)
const initClaim = (who: string, c = RIGHT): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: c }]

beforeEach(async () => {
  h = await Harness.create({ reference })
  // Dave and Eve are the two verifiers the chain can draw; Ferdie watches the pool (whistleblower role only)
  for (const [n, roles] of [['Bob', 2], ['Dave', 4 | 8], ['Eve', 4 | 8], ['Ferdie', 8]] as const) {
    expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  }
  expect(h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: u8aToHex(sha256(BYTES)), program: u8aToHex(BYTES), datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 4, checkpointEvery: 2,
    escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: V, verifierCount: 2, challengeWindow: 12, solveTimeout: 20
  }).error).toBeUndefined()
  h.advance(1)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(merkleRoot(ROOTS)), finalStateRoot: u8aToHex(ROOTS[4]), stepCount: 4, checkpoints: [] }).error).toBeUndefined()
  // the randomness block, then the block that draws Dave and Eve
  h.advance(2)
  expect(assignedNames(h).sort()).toEqual(['Dave', 'Eve'])
})

describe('a copied initial-state claim', () => {
  it('included before the verifier\'s own: the verifier\'s claim still backs its reject, and it is paid its reward', () => {
    const dave = worth('Dave')
    // Ferdie copies Dave's pending claim and gets it into the same block ahead of it
    const { results } = h.block([initClaim('Ferdie'), initClaim('Dave')])
    expect(results[0].error).toBeUndefined()
    expect(task().solverFailed).toBe(true)
    // before: Arbitration.SolverAlreadyFailed, and Dave's reject void at the window's close
    expect(results[1].error).toBeUndefined()
    expect(results[1].events).toContain('Arbitration.InitialStateRuled')
    expect(results[1].events).not.toContain('Arbitration.Slashed')
    expect(h.run('Dave', 'Arbitration', 'submit_verdict', { taskId: 0, accept: false, checkedSteps: [] }).error).toBeUndefined()
    // Bob was slashed once, by the first ruling
    expect(h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts.Bob)!.stake).toBe(STAKE / 2n)
    for (let i = 0; i < 40 && task().phase === 'Verifying'; i++) h.advance(1)
    expect(task().phase).toBe('Failed')
    // Dave's check is paid: its reward, its bond back
    expect(worth('Dave') - dave).toBe(V)
  })

  it('after the solver failed, nobody but an assigned verifier whose reject is not yet backed may claim, and a wrong late claim costs the bond', () => {
    expect(h.run('Ferdie', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: RIGHT }).error).toBeUndefined()
    const bond = h.read<{ disputeBond: bigint }>('Arbitration', 'Params')!.disputeBond
    // a second copy by a non-verifier: refused, nothing reserved
    expect(h.run('Alice', 'Arbitration', 'register_node', h.registerArgs('Alice', 8, STAKE)).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: RIGHT }).error).toBe('Arbitration.SolverAlreadyFailed')
    // Eve claims the element right next to the wrong one, which is the program's: she loses her bond
    const eve = worth('Eve')
    const r = h.run('Eve', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claim(4320) })
    expect(r.error).toBeUndefined()
    expect(r.events).toContain('Arbitration.Slashed')
    expect(worth('Eve')).toBe(eve - bond)
    // once backed, once: Eve cannot claim again, nor Ferdie
    expect(h.run('Eve', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: RIGHT }).error).toBe('Arbitration.SolverAlreadyFailed')
    expect(h.run('Ferdie', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: RIGHT }).error).toBe('Arbitration.SolverAlreadyFailed')
  })
})

// The shares of a copied claim. The first right claim slashes the solver S/2
// and every accept VerifierSlashPpm, half of each to the claimer; before, that
// was whoever was included first: a pool watcher copying a whistleblower's
// pending claim took S/4 and the accepts' shares, and the whistleblower's own
// claim was refused (SolverAlreadyFailed). Now the whistleblower commits to
// its claim a block before it reveals it; the shares are held for the fact
// while a commitment ranked before the winner may still be revealed, and go
// to the earliest-ranked right claim. The test fails if the watcher keeps any
// share or the whistleblower gets less than S/4 and the accepts' shares.
describe('a copied initial-state claim of a whistleblower that committed to it', () => {
  const reveal = (who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'reveal_initial_state', { taskId: 0, claim: RIGHT, salt: saltOf(who, 'InitialState') }]
  for (const copy of ['included ahead of the reveal in its block, without a commitment', 'committed after the reveal was seen, the reveal held back a block'] as const) {
    it(`${copy}: the whistleblower takes every share, the watcher none`, () => {
      expect(h.run('Charlie', 'Arbitration', 'register_node', h.registerArgs('Charlie', 8, STAKE)).error).toBeUndefined()
      // the drawn verifiers accepted without comparing the initial state: their accepts are slashed with the solver
      for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
      const before = { Ferdie: worth('Ferdie'), Charlie: worth('Charlie') }
      expect(h.block([commitCall(h.accounts, 'Ferdie', 'InitialState', RIGHT)]).results[0].error).toBeUndefined()
      let results
      if (copy === 'included ahead of the reveal in its block, without a commitment') {
        results = h.block([initClaim('Charlie'), reveal('Ferdie')]).results
      } else {
        expect(h.block([commitCall(h.accounts, 'Charlie', 'InitialState', RIGHT)]).results[0].error).toBeUndefined()
        results = h.block([reveal('Charlie'), reveal('Ferdie')]).results
      }
      // the watcher's claim failed the solver; the whistleblower's is still heard (before: SolverAlreadyFailed)
      expect(results[0].events).toContain('Arbitration.ShareHeld')
      expect(results[1].error).toBeUndefined()
      expect(results[1].events).toContain('Arbitration.SharePaid')
      // S/4 of the solver's slash and half of each accept's VerifierSlashPpm (a fifth of its stake)
      expect(worth('Ferdie') - before.Ferdie).toBe(STAKE / 4n + 2n * (STAKE / 5n / 2n))
      expect(worth('Charlie')).toBe(before.Charlie)
      expect(h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts.Bob)!.stake).toBe(STAKE / 2n)
    })
  }
})
