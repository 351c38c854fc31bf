import { Keyring } from '@polkadot/keyring'
import { sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { merkleProof, merkleRoot, nodeHash, sha256, fromHex, toHex } from '../../protocols/commit/merkle.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { ClaimRejected, DefenderGame, datasetRootOf, encodeEntryBytes, judgeClaim, signMsg, skeletonRootOf, type Claim, type JudgeEnv } from '../../protocols/dispute/index.js'
import { pathWith } from '../../protocols/dispute/tree.js'
import { newProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { registerArgs } from '../helpers/peer-key.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { honestRun, type Run } from '../unit/dispute/fixture.js'

// An attacker who knows the Merkle trees a claim is checked against tries to
// pass an inner node off as a leaf (or a padded subtree as an empty leaf),
// and a solver tries to be paid for a proof shorter than its task. Each test
// fails if the attack still works.

const kr = new Keyring({ type: 'sr25519' })
const bob = kr.addFromUri('//Bob')
const dave = kr.addFromUri('//Dave')
const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }

let run0: Run
let run2: Run

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5 })
  run0 = await honestRun(p, ds, 0)
  run2 = await honestRun(p, ds, 2)
}, 120_000)

const GENESIS = new Uint8Array(32).fill(0x11)
const CTX = { genesis: GENESIS, taskId: 0, disputeId: 0 }

function env (run: Run, caller: 'challenger' | 'defender'): JudgeEnv {
  return {
    ...CTX,
    step: run.step,
    challenger: dave.publicKey,
    defender: bob.publicKey,
    caller,
    programHash: sha256(run.programBytes),
    datasetRoot: datasetRootOf(commitTensor(run.x).root, commitTensor(run.y).root),
    skeletonRoot: skeletonRootOf(run.skeleton),
    proofRoot: merkleRoot(run.roots.map(fromHex)),
    stepCount: run.program.steps,
    reference,
    verify
  }
}

function defender (run: Run): DefenderGame {
  return new DefenderGame({ ...CTX, step: run.step, entries: run.entries, tensor: (e, io, k) => io === 'in' ? run.values[e].inputs[k] : run.values[e].outputs[k], account: bob.publicKey, sign: m => bob.sign(m), stateRoots: run.roots })
}

/** the ruling, or the reason the chain refuses the claim */
function judge (e: JudgeEnv, c: Claim): string {
  try { return `${judgeClaim(e, c).winner} wins` } catch (x) { if (x instanceof ClaimRejected) return x.reason; throw x }
}

describe('inner nodes passed off as leaves', () => {
  it('a skeleton claim naming the skeleton tree\'s root (or an inner node) as a leaf is refused; the honest leaf loses for the challenger', () => {
    const D = defender(run2)
    const commit = D.commit()
    const inner = merkleRoot(run2.skeleton)
    const base = { v: 1 as const, kind: 'skeleton' as const, commit, index: 0, entry: encodeEntryBytes(run2.entries[0]), path: pathWith(D.levels, new Map(), 0), skelCount: run2.skeleton.length, skelInner: inner }
    // sanity: the same claim with the true leaf and path is well-formed, and an honest defender wins it
    expect(judge(env(run2, 'challenger'), { ...base, skelLeaf: run2.skeleton[0], skelPath: merkleProof(run2.skeleton, 0) })).toBe('defender wins')
    // the root as leaf 0 with an empty path
    expect(judge(env(run2, 'challenger'), { ...base, skelLeaf: inner, skelPath: [] })).toBe('InvalidProof')
    // a level-1 node as leaf 0, one sibling short
    const full = merkleProof(run2.skeleton, 0)
    const level1 = nodeHash(run2.skeleton[0], run2.skeleton[1])
    expect(judge(env(run2, 'challenger'), { ...base, skelLeaf: level1, skelPath: full.slice(1) })).toBe('InvalidProof')
    // a leaf count other than the committed one does not open skeleton_root
    expect(judge(env(run2, 'challenger'), { ...base, skelLeaf: inner, skelPath: [], skelCount: 1 })).toBe('InvalidProof')
  })

  it('a cheating defender cannot beat an honest opening at step 0 with a level-1 node of proof_root as the pre-state', () => {
    const roots = run0.roots.map(fromHex)
    const commit = defender(run0).commit()
    const open = signMsg({ t: 'open', d: 0, step: 0, pre: roots[0], post: roots[1], seq: 1, prev: sha256(commit.m) }, dave.publicKey, m => dave.sign(m), CTX)
    // the honest pre-state: the defender's badOpen is refused (the challenger agreed with it)
    expect(judge(env(run0, 'defender'), { v: 1, kind: 'badOpen', open, pre: roots[0], prePath: merkleProof(roots, 0) })).toBe('InvalidClaim')
    // nodeHash(leaf 0, leaf 1) verifies at index 0 with the path one level short: refused now
    const node = nodeHash(roots[0], roots[1])
    expect(judge(env(run0, 'defender'), { v: 1, kind: 'badOpen', open, pre: node, prePath: merkleProof(roots, 0).slice(1) })).toBe('InvalidProof')
  })

  it('no state claim verifies with a post-state root of the wrong depth', () => {
    const D = defender(run2)
    const commit = D.commit()
    const roots = run2.roots.map(fromHex)
    const at = run2.entries.length - 1
    expect(run2.entries[at].kernel).toBe('@state')
    const base = { v: 1 as const, kind: 'state' as const, commit, index: at, entry: encodeEntryBytes(run2.entries[at]), path: pathWith(D.levels, new Map(), at) }
    const which = run2.step + 1
    const path = merkleProof(roots, which)
    expect(judge(env(run2, 'challenger'), { ...base, post: roots[which], postPath: path })).toBe('defender wins')
    // every inner node on the way up, with the shortened path, at every index an attacker could name
    let node = roots[which]; let i = which
    for (let level = 1; level < path.length; level++) {
      node = (i & 1) === 0 ? nodeHash(node, path[level - 1]) : nodeHash(path[level - 1], node)
      i >>= 1
      expect(judge(env(run2, 'challenger'), { ...base, post: node, postPath: path.slice(level) })).toBe('InvalidProof')
    }
  })
})

describe('truncated proofs', () => {
  const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

  it('a 1,000-step task committed with 1 step is refused, and the solver is never paid for it', async () => {
    const h = await Harness.create({ reference })
    const p = taskProgram({ steps: 1000, checkpointEvery: 100 })
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, 2000n * UNIT)).error).toBeUndefined()
    expect(h.run('Dave', 'Arbitration', 'register_node', h.registerArgs('Dave', 4, 2000n * UNIT)).error).toBeUndefined()
    expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 1000, checkpointEvery: 100, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: minWindow(p, 1), solveTimeout: 80 }).error).toBeUndefined()
    h.advance(1)
    const bobFree = h.free('Bob')
    for (const stepCount of [1, 999, 1001]) {
      expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount, checkpoints: [] }).error).toBe('Arbitration.IncompleteProof')
    }
    h.advance(90)
    const t = h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
    expect(t.phase).not.toBe('Settled')
    expect(h.free('Bob')).toBeLessThanOrEqual(bobFree)
    expect(toHex(fromHex(t.proofRoot))).toBe('00'.repeat(32))
  })
})

describe('peer ids bound without their key', () => {
  it('an account cannot register a peer id whose key did not sign the binding for it: no squatting, no sending challengers elsewhere', async () => {
    const h = await Harness.create({ reference })
    const bobPeer = h.registerArgs('Bob', 2, 2000n * UNIT)
    // Mallory (Charlie) replays Bob's registration: the signature binds Bob's account, not hers
    expect(h.run('Charlie', 'Arbitration', 'register_node', bobPeer).error).toBe('Arbitration.PeerKeyNotProven')
    // nor can she sign for Bob's peer id with her own peer key
    const own = h.registerArgs('Charlie', 2, 2000n * UNIT)
    expect(h.run('Charlie', 'Arbitration', 'register_node', { ...own, peerId: bobPeer.peerId }).error).toBe('Arbitration.PeerKeyNotProven')
    // a binding signed for another chain (genesis) does not do either
    const elsewhere = registerArgs('0x' + '22'.repeat(32), h.accounts.Bob, 'Bob', 2, 2000n * UNIT)
    expect(h.run('Bob', 'Arbitration', 'register_node', elsewhere).error).toBe('Arbitration.PeerKeyNotProven')
    expect(h.read('Arbitration', 'Nodes', h.accounts.Charlie)).toBeUndefined()
    // Bob's own registration goes through, after all that
    expect(h.run('Bob', 'Arbitration', 'register_node', bobPeer).error).toBeUndefined()
  })
})
