import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady, sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { chunkedStateRoot, proveElementChunk } from '../../protocols/commit/chunked.js'
import { fromHex, merkleRoot, sha256, toHex } from '../../protocols/commit/merkle.js'
import { stateRoot } from '../../protocols/commit/state.js'
import { matrixView, proveSlice, type TensorData } from '../../protocols/commit/tensor.js'
import {
  ClaimRejected, DefenderGame, buildInitClaim, decodeClaim, decodeMsg, encodeClaim, judgeClaim, signAfter,
  type Claim, type InitClaim, type JudgeEnv, type Ruling
} from '../../protocols/dispute/index.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { initialState } from '../../protocols/program/init.js'
import { newProgram, type TaskProgram } from '../../protocols/program/index.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'

// Step 0 under chunked state roots (docs/disputes.md "Chunked roots: design"):
// state root 0 is the chunked root of the program's initialisation, so the init
// claim opens it by chunked heads and a chunk, and a step-0 badOpen stands only
// on the chunked initial root the chain recomputes. Who gains by breaking it: a
// solver starting a chunked program from a state of its choosing (one element,
// or the right values under the other scheme) must lose to the init claim; an
// honest defender whose step-0 pre-state is disputed must win its badOpen. The
// judge is the chain's (judgeClaim): a chunked program is not admissible on the
// chain until every step is wired (CHUNKED_STATE_JUDGED), so it is called here
// as adjudicate calls it.

const kr = new Keyring({ type: 'sr25519' })
const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }
const CTX = { genesis: new Uint8Array(32).fill(0x11), taskId: 0, disputeId: 0 }
const STEPS = 5

let program: TaskProgram
let bytes: Uint8Array
let init: TensorData[]
let tweaked: TensorData[]

const programBytes = (p: TaskProgram): Uint8Array => {
  const { info: _i, ...bare } = p as TaskProgram & { info?: unknown }
  return new TextEncoder().encode(canonicalJson(bare))
}

beforeAll(async () => {
  await cryptoWaitReady()
  const ds = syntheticDataset(7, 64, 8)
  program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: STEPS, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5, stateCommitment: 'chunked' })
  bytes = programBytes(program)
  init = initialState(program)
  // one weight of the first kernel negated, in its second chunk
  tweaked = init.map((t, i) => i === 0 ? { ...t, values: t.values.map((v, k) => k === 1030 ? -v : v) } : t) as TensorData[]
})

/** A proof whose state root 0 is `root0` (the other leaves: any roots). */
function proofOf (root0: Uint8Array): Uint8Array[] {
  return [root0, ...Array.from({ length: STEPS }, (_, i) => sha256(Uint8Array.of(i)))]
}

function env (roots: Uint8Array[], caller: 'challenger' | 'defender', progBytes = bytes): JudgeEnv {
  return {
    ...CTX, step: 0, challenger: kr.addFromUri('//Dave').publicKey, defender: kr.addFromUri('//Bob').publicKey, caller,
    programHash: sha256(progBytes), datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32),
    proofRoot: merkleRoot(roots), stepCount: STEPS, verify
  }
}

/** The claim as adjudicate takes it: through its bytes. */
const onChain = (e: JudgeEnv, c: Claim): Ruling => judgeClaim(e, decodeClaim(encodeClaim(c)))

describe('the init claim of a chunked program', () => {
  it('a chunked state root 0 one element off the initialisation loses to a chunk opening (chunked heads)', () => {
    const roots = proofOf(chunkedStateRoot(tweaked, 0))
    const claim = buildInitClaim({ program: bytes, stateRoots: roots, state: tweaked, t: 0, flat: 1030 })
    expect(claim.chunk?.index).toBe(1)
    expect(claim.slice).toBeUndefined()
    expect(claim.heads.every(h => 'chunkRoot' in h)).toBe(true)
    expect(onChain(env(roots, 'challenger'), claim).winner).toBe('challenger')
  })

  it('an honest chunked state root 0: the claim loses for the challenger, at every element of the tensor\'s chunks\' edges', () => {
    const roots = proofOf(chunkedStateRoot(init, 0))
    for (const flat of [0, 1023, 1024, init[0].values.length - 1]) {
      expect(onChain(env(roots, 'challenger'), buildInitClaim({ program: bytes, stateRoots: roots, state: init, t: 0, flat })).winner).toBe('defender')
    }
  })

  it('the right values under the row + column commitment are not a chunked program\'s state 0: the solver loses', () => {
    const roots = proofOf(stateRoot(init, 0))
    // the row + column claim a non-chunked copy of the program builds, about the chunked program
    const rowcol = programBytes({ ...program, stateCommitment: undefined })
    const claim: InitClaim = { ...buildInitClaim({ program: rowcol, stateRoots: roots, state: init, t: 0, flat: 7 }), program: bytes }
    expect(claim.slice).toBeDefined()
    const r = onChain(env(roots, 'challenger'), claim)
    expect(r.winner).toBe('challenger')
    expect(r.reason).toMatch(/row \+ column commitment/)
    // and a chunked root 0 under a program without the field likewise
    const chunkedRoots = proofOf(chunkedStateRoot(init, 0))
    const other: InitClaim = { ...buildInitClaim({ program: bytes, stateRoots: chunkedRoots, state: init, t: 0, flat: 7 }), program: rowcol }
    expect(onChain(env(chunkedRoots, 'challenger', rowcol), other).winner).toBe('challenger')
  })

  it('refuses openings that do not prove the element: another element\'s chunk, a row in place of the chunk', () => {
    const roots = proofOf(chunkedStateRoot(tweaked, 0))
    const claim = buildInitClaim({ program: bytes, stateRoots: roots, state: tweaked, t: 0, flat: 1030 })
    const e = env(roots, 'challenger')
    const wrongChunk = { ...claim, chunk: proveElementChunk(tweaked[0], 0) }
    expect(() => onChain(e, wrongChunk)).toThrow(ClaimRejected)
    const { cols } = matrixView(tweaked[0].shape)
    const { chunk: _c, ...noChunk } = claim
    expect(() => onChain(e, { ...noChunk, slice: proveSlice(tweaked[0], 'row', Math.floor(1030 / cols)) })).toThrow(ClaimRejected)
  })
})

describe('a badOpen at step 0 of a chunked program', () => {
  /** The defender's (Bob's) answer to the challenger's (Dave's) opening of step 0 naming pre-state `pre`. */
  function badOpen (roots: Uint8Array[], pre: Uint8Array): Claim {
    const bob = kr.addFromUri('//Bob'); const dave = kr.addFromUri('//Dave')
    const D = new DefenderGame({
      ...CTX, step: 0, entries: [], tensor: () => { throw new Error('no tensor') }, account: bob.publicKey, sign: m => bob.sign(m),
      stateRoots: roots.map(toHex), program: bytes
    })
    const commit = D.commit()
    const open = signAfter({ ...CTX, account: dave.publicKey, sign: m => dave.sign(m) }, { t: 'open', d: 0, step: 0, pre, post: sha256(Uint8Array.of(9)) }, commit, 0)
    const r = D.respond(decodeMsg(open.m), open)
    if (r.claim === undefined) throw new Error('the defender played on')
    return r.claim
  }

  it('an honest defender\'s chunked initial root stands: the chain recomputes the chunked root, the challenger loses', () => {
    const roots = proofOf(chunkedStateRoot(init, 0))
    const claim = badOpen(roots, fromHex(toHex(chunkedStateRoot(tweaked, 0))))
    expect(claim.kind).toBe('badOpen')
    expect(onChain(env(roots, 'defender'), claim).winner).toBe('defender')
  })

  it('a defender whose state 0 is not the program\'s cannot hide behind a badOpen (row + column root of the right values, or a chunked one of others)', () => {
    for (const root0 of [stateRoot(init, 0), chunkedStateRoot(tweaked, 0)]) {
      const roots = proofOf(root0)
      const claim = badOpen(roots, chunkedStateRoot(init, 0))
      expect(() => onChain(env(roots, 'defender'), claim)).toThrow(ClaimRejected)
    }
  })
})
