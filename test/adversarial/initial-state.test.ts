import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { DisputeInfo } from '../../devnet/chain/runtime/dispute-state.js'
import { fromHex, merkleProof, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { ClaimRejected, buildInitClaim, datasetRootOf, encodeClaim, encodeInitClaim, firstInitMismatch, judgeClaim, signMsg, skeletonRootOf, type Claim, type JudgeEnv } from '../../protocols/dispute/index.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { initialState, initialStateRoot } from '../../protocols/program/init.js'
import { newProgram, type TaskProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../node/train/dataset.js'
import { Trainer } from '../../node/train/trainer.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import type { Harness } from '../unit/chain/harness.js'
import { honestRun, nodeOf, taskOf, taskOnChain, type Run, type Side } from '../unit/dispute/fixture.js'

// A solver that starts from a state of its choosing (a backdoored model) and
// then trains honestly from it passes every replay: verifiers check
// transitions. The initial-state claim ties stateRoots[0] to the program. Each
// test fails if the attacker gains anything: a cheating solver keeps its stake,
// is paid, or beats an honest challenger; an honest solver loses to a false claim.

// the harness chain's genesis (its block 1's parent), task 0, dispute 0
const CTX = { genesis: new Uint8Array(32).fill(0x11), taskId: 0, disputeId: 0 }
const kr = new Keyring({ type: 'sr25519' })
const bob = kr.addFromUri('//Bob')
const dave = kr.addFromUri('//Dave')
const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }

let ds: Dataset
let program: TaskProgram
let run: Run
let tweaked: TensorData[]
let invented: TensorData[]

/** Trains honestly from `state` (the attacker's step 0): every transition after it is right. */
async function trainFrom (state: TensorData[]): Promise<string[]> {
  const t = await Trainer.create(program, ds)
  t.loadState(state, 0)
  const roots = [toHex(t.stateRoot())]
  while (t.step < program.steps) { t.runStep(); roots.push(toHex(t.stateRoot())) }
  t.dispose()
  return roots
}
const sideOf = (roots: string[]): Side => ({ entries: run.entries, values: run.values, roots })

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(7, 64, 8)
  program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'adam', batchSize: 4, seed: 11, checkpointEvery: 5 })
  run = await honestRun(program, ds, 0)
  // one weight of the first kernel changed; a wholly invented model (another seed's initialisation, slots and all)
  tweaked = initialState(program).map((t, i) => i === 0 ? { ...t, values: t.values.map((v, k) => k === 1000 ? -v : v) } : t) as TensorData[]
  invented = initialState({ ...program, seed: 12 })
}, 120_000)

const claimHex = (roots: string[], state: TensorData[]): string => {
  const m = firstInitMismatch(program, state) ?? { t: 0, flat: 0 }
  return u8aToHex(encodeInitClaim(buildInitClaim({ program: run.programBytes, stateRoots: roots.map(fromHex), state, ...m })))
}

/** Dave and Eve (the task's assigned verifiers) accept with their samples checked, then Ferdie challenges the initial state. */
function verdictsThenChallenge (h: Harness, roots: string[], state: TensorData[]): { events: string[], error?: string } {
  h.advance(1)
  for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
  return h.run('Ferdie', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: claimHex(roots, state) })
}

describe('unbound initial state', () => {
  for (const [name, state] of [['one element changed', () => tweaked], ['a wholly invented state', () => invented]] as const) {
    it(`${name}, trained honestly from: one init claim slashes the solver, fails the task unpaid, slashes the accepting verdicts`, async () => {
      const roots = await trainFrom(state())
      expect(roots[0]).not.toBe(toHex(initialStateRoot(program)))
      const h = await taskOnChain(run, sideOf(roots), { verifiers: ['Dave', 'Eve'] })
      const stake = nodeOf(h, 'Bob').stake
      const verifierStake = nodeOf(h, 'Dave').stake
      const ferdie = h.free('Ferdie')
      const r = verdictsThenChallenge(h, roots, state())
      expect(r.error).toBeUndefined()
      expect(r.events).toEqual(expect.arrayContaining(['Arbitration.InitialStateRuled', 'Arbitration.VerdictSlashed']))
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(stake)
      expect(nodeOf(h, 'Dave').stake).toBeLessThan(verifierStake)
      expect(h.free('Ferdie')).toBeGreaterThan(ferdie)
      const bobFree = h.free('Bob')
      for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) h.advance(1)
      expect(taskOf(h).phase).toBe('Failed')
      expect(h.free('Bob')).toBe(bobFree)
    }, 120_000)
  }

  it('an honest solver challenged with a false init claim keeps its stake, gets the bond share, and is paid', async () => {
    const h = await taskOnChain(run, sideOf(run.roots), { verifiers: ['Eve', 'Ferdie'] })
    expect(run.roots[0]).toBe(toHex(initialStateRoot(program)))
    const stake = nodeOf(h, 'Bob').stake
    const bobFree = h.free('Bob')
    const daveFree = h.free('Dave')
    // the claim on the honest state: element 1000 of the first kernel is right
    const claim = u8aToHex(
      encodeInitClaim(buildInitClaim({ program: run.programBytes, stateRoots: run.roots.map(fromHex), state: initialState(program), t: 0, flat: 1000 }))
    )
    const r = h.run('Dave', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim })
    expect(r.error).toBeUndefined()
    expect(nodeOf(h, 'Bob').stake).toBe(stake)
    expect(h.free('Bob')).toBeGreaterThan(bobFree)
    expect(h.free('Dave')).toBeLessThan(daveFree)
    // a claim about a state the solver did not commit is refused: no way to pass the true init off against it
    const invent = u8aToHex(
      encodeInitClaim(buildInitClaim({ program: run.programBytes, stateRoots: run.roots.map(fromHex), state: tweaked, t: 0, flat: 1000 }))
    )
    expect(h.run('Eve', 'Arbitration', 'challenge_initial_state', { taskId: 0, claim: invent }).error).toBe('Arbitration.InvalidProof')
    h.advance(1)
    expect(h.run('Eve', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Eve') }).error).toBeUndefined()
    expect(h.run('Ferdie', 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, 'Ferdie') }).error).toBeUndefined()
    const paid = h.free('Bob')
    for (let i = 0; i < 200 && taskOf(h).phase === 'Verifying'; i++) h.advance(1)
    expect(taskOf(h).phase).toBe('Settled')
    expect(h.free('Bob')).toBeGreaterThan(paid)
  }, 120_000)
})

describe('a step-0 dispute over the initial state', () => {
  function env (roots: string[], caller: 'challenger' | 'defender'): JudgeEnv {
    return {
      ...CTX, step: 0, challenger: dave.publicKey, defender: bob.publicKey, caller,
      programHash: sha256(run.programBytes), datasetRoot: datasetRootOf(
        commitTensor(run.x).root, commitTensor(run.y).root
      ), skeletonRoot: skeletonRootOf(run.skeleton),
      proofRoot: merkleRoot(roots.map(fromHex)), stepCount: program.steps, reference, verify
    }
  }
  const judge = (e: JudgeEnv, c: Claim): string => { try { return `${judgeClaim(e, c).winner} wins` } catch (x) { if (x instanceof ClaimRejected) return x.reason; throw x } }

  it('a cheating defender cannot win with badOpen against an honest challenger who opened with the true initial state; the challenger wins with an init claim', async () => {
    const roots = await trainFrom(tweaked)
    const trueInit = initialStateRoot(program)
    const commit = signMsg({ t: 'commit', d: 0, step: 0, traceRoot: sha256(Uint8Array.of(1)), depth: 3, seq: 0, prev: new Uint8Array(32) }, bob.publicKey, m => bob.sign(m), CTX)
    const open = signMsg({ t: 'open', d: 0, step: 0, pre: trueInit, post: fromHex(roots[1]), seq: 1, prev: sha256(commit.m) }, dave.publicKey, m => dave.sign(m), CTX)
    const badOpen: Claim = { v: 1, kind: 'badOpen', open, pre: fromHex(roots[0]), prePath: merkleProof(roots.map(fromHex), 0), program: run.programBytes }
    expect(judge(env(roots, 'defender'), badOpen)).toBe('InvalidClaim')
    expect(judge(env(roots, 'defender'), { ...badOpen, program: undefined })).not.toBe('defender wins')
    const init = buildInitClaim({ program: run.programBytes, stateRoots: roots.map(fromHex), state: tweaked, ...firstInitMismatch(program, tweaked)! })
    expect(judge(env(roots, 'challenger'), init)).toBe('challenger wins')
    // only at step 0, only the challenger
    expect(judge({ ...env(roots, 'challenger'), step: 1 }, init)).toBe('InvalidClaim')
    expect(judge(env(roots, 'defender'), init)).toBe('InvalidClaim')

    // on chain: the defender's badOpen is refused, the challenger's init claim ends the dispute for it
    const h = await taskOnChain(run, sideOf(roots))
    expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: 0 }).error).toBeUndefined()
    // the moves were exchanged off chain; the claims carry what they rest on
    expect(h.run('Bob', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(badOpen)) }).error).toBe('Arbitration.InvalidClaim')
    const r = h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(init)) })
    expect(r.error).toBeUndefined()
    expect(h.read<DisputeInfo>('Arbitration', 'Disputes', 0)?.status).toBe('ChallengerWon')
  }, 120_000)

  it('an honest defender still wins a step-0 badOpen against a challenger disputing the true initial state', () => {
    const roots = run.roots
    const commit = signMsg({ t: 'commit', d: 0, step: 0, traceRoot: sha256(Uint8Array.of(1)), depth: 3, seq: 0, prev: new Uint8Array(32) }, bob.publicKey, m => bob.sign(m), CTX)
    const open = signMsg({ t: 'open', d: 0, step: 0, pre: sha256(Uint8Array.of(9)), post: fromHex(roots[1]), seq: 1, prev: sha256(commit.m) }, dave.publicKey, m => dave.sign(m), CTX)
    const badOpen: Claim = { v: 1, kind: 'badOpen', open, pre: fromHex(roots[0]), prePath: merkleProof(roots.map(fromHex), 0), program: run.programBytes }
    expect(judge(env(roots, 'defender'), badOpen)).toBe('defender wins')
    // an init claim about the honest state loses for the challenger
    const init = buildInitClaim({ program: run.programBytes, stateRoots: roots.map(fromHex), state: initialState(program), t: 0, flat: 1000 })
    expect(judge(env(roots, 'challenger'), init)).toBe('defender wins')
  })
})
