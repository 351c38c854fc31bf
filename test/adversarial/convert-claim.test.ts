import { cryptoWaitReady } from '@polkadot/util-crypto'
import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { chunkedStateLeaves, chunkedStateRoot, commitChunked, proveElementChunk } from '../../protocols/commit/chunked.js'
import { fromHex, merkleProof, toHex } from '../../protocols/commit/merkle.js'
import { commitTensor, matrixView, proveSlice, type TensorData } from '../../protocols/commit/tensor.js'
import { encodeClaim, encodeEntryBytes, MAX_CLAIM_BYTES, type Claim } from '../../protocols/dispute/index.js'
import { pathWith } from '../../protocols/dispute/tree.js'
import { stateReadEntry } from '../../protocols/tape/state-io.js'
import { honest, taskOf, tamperWeight, type Run, type Side } from '../unit/dispute/fixture.js'
import { dispute, mlpRun, opened, worth } from './setup.js'

// The chain's entry for the cross-check of a state conversion (claim kind
// `convert`; chunked state roots, docs/disputes.md "Chunked roots: design"):
// the runtime adjudicates it through judgeClaim like any claim. Who gains by
// breaking it: a defender whose @StateRead hands its ops a tensor other than
// its state must be slashed on it; a challenger bringing it against an honest
// conversion must lose its bond; and against today's tapes, which hold no
// conversion, it must be refused, never ruled on.

let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  run = await mlpRun()
}, 120_000)

/** `side`'s tape with entry 0 a @StateRead of state tensor 0 whose row + column output is `fine`. */
function withRead (side: Side, fine: TensorData): Side {
  const t = run.before[0]
  const entries = side.entries.slice()
  entries[0] = stateReadEntry(0, 0, t.dtype, t.shape, toHex(commitChunked(t).root), toHex(commitTensor(fine).root))
  const values = side.values.slice()
  values[0] = { inputs: [t], outputs: [fine] }
  return { entries, values, roots: side.roots }
}

function flipped (t: TensorData, flat: number): TensorData {
  const v = (t.values as Float32Array).slice()
  new Uint32Array(v.buffer)[flat] ^= 1
  return { ...t, values: v }
}

/** The challenger's claim on element `flat` of entry `i`: its own chunk of the agreed state, the defender's column. */
function convertClaim (g: Awaited<ReturnType<typeof opened>>['g'], side: Side, i: number, flat: number, fine: TensorData): Claim {
  const { cols } = matrixView(fine.shape)
  return {
    v: 1,
    kind: 'convert',
    commit: g.D.commit(),
    index: i,
    entry: encodeEntryBytes(side.entries[i]),
    path: pathWith(g.D.levels, new Map(), i),
    flat,
    chunk: proveElementChunk(run.before[0], flat),
    slice: proveSlice(fine, 'col', flat % cols)
  }
}

describe('the convert claim on chain', () => {
  it('slashes a defender whose @StateRead output differs from its state in one element (the ruling is recorded as Convert)', async () => {
    const f = run.before[0].values.length >> 1
    const lie = flipped(run.before[0], f)
    const cheat = withRead(tamperWeight(run), lie)
    const { h, g } = await opened(run, cheat)
    const claim = convertClaim(g, cheat, 0, f, lie)
    const bytes = encodeClaim(claim)
    expect(bytes.length).toBeLessThan(MAX_CLAIM_BYTES)
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(bytes) }).error).toBeUndefined()
    expect(dispute(h).status).toBe('ChallengerWon')
    h.advance(REVEAL_WINDOW + 2)
    expect(taskOf(h).solverFailed).toBe(true)
    expect(taskOf(h).rulings[0]).toMatchObject({ outcome: 'SolverPenalized', claimKind: 'Convert' })
  }, 60_000)

  it('rules for an honest conversion: the challenger loses its bond', async () => {
    const f = run.before[0].values.length >> 1
    const side = withRead(honest(run), run.before[0])
    const { h, g } = await opened(run, side)
    const before = worth(h, 'Dave')
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(convertClaim(g, side, 0, f, run.before[0]))) }).error).toBeUndefined()
    expect(dispute(h).status).toBe('DefenderWon')
    expect(worth(h, 'Dave')).toBeLessThan(before)
    expect(taskOf(h).solverFailed).toBe(false)
  }, 60_000)

  it('refuses it against today\'s tapes (no conversion in them) and from the defender', async () => {
    const side = honest(run)
    const { h, g } = await opened(run, side)
    // entry 0 of the MLP's tape is an op, not a conversion: the claim is refused, the dispute goes on
    expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(convertClaim(g, side, 0, 7, run.before[0]))) }).error).toBe('Arbitration.InvalidClaim')
    expect(dispute(h).status).toBe('Open')
    const read = withRead(honest(run), run.before[0])
    const o = await opened(run, read)
    expect(o.h.run('Bob', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(convertClaim(o.g, read, 0, 7, run.before[0]))) }).error).toBe('Arbitration.InvalidClaim')
  }, 60_000)
})

describe('the input claim of a @StateRead under a chunked pre-state root', () => {
  /** `side` with its pre-state root of the disputed step chunked, and entry 0 a @StateRead whose input names `named`'s chunked commitment. */
  function chunkedPre (side: Side, named: TensorData): Side {
    const t = run.before[0]
    const roots = side.roots.slice()
    roots[run.step] = toHex(chunkedStateRoot(run.before, run.step))
    const entries = side.entries.slice()
    entries[0] = stateReadEntry(0, 0, t.dtype, t.shape, toHex(commitChunked(named).root), toHex(commitTensor(t).root))
    return { entries, values: side.values, roots }
  }
  function inputClaim (g: Awaited<ReturnType<typeof opened>>['g'], side: Side, head: Record<string, unknown>): Claim {
    return {
      v: 1,
      kind: 'input',
      commit: g.D.commit(),
      index: 0,
      entry: encodeEntryBytes(side.entries[0]),
      path: pathWith(g.D.levels, new Map(), 0),
      k: 0,
      prov: {
        t: 0,
        tensor: head as never,
        tensorPath: merkleProof(chunkedStateLeaves(run.before, run.step), 0),
        pre: fromHex(side.roots[run.step]),
        prePath: merkleProof(side.roots.map(fromHex), run.step)
      }
    }
  }
  const head = (): Record<string, unknown> => ({ dtype: run.before[0].dtype, shape: run.before[0].shape, chunkRoot: commitChunked(run.before[0]).chunkRoot })

  it('proves the state tensor by its chunked head: a read of another tensor loses, the state\'s own holds', async () => {
    const lie = chunkedPre(tamperWeight(run), flipped(run.before[0], 3))
    const o = await opened(run, lie)
    expect(o.h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(inputClaim(o.g, lie, head()))) }).error).toBeUndefined()
    expect(dispute(o.h).status).toBe('ChallengerWon')
    const ok = chunkedPre(honest(run), run.before[0])
    const p = await opened(run, ok)
    expect(p.h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(inputClaim(p.g, ok, head()))) }).error).toBeUndefined()
    expect(dispute(p.h).status).toBe('DefenderWon')
  }, 60_000)

  it('refuses a head that is not the leaf: the row + column head of the same tensor, or a chunked head under another shape', async () => {
    const ok = chunkedPre(honest(run), run.before[0])
    const { h, g } = await opened(run, ok)
    const c = commitTensor(run.before[0])
    const t = run.before[0]
    for (const bad of [{ dtype: t.dtype, shape: t.shape, rowRoot: c.rowRoot, colRoot: c.colRoot }, { ...head(), shape: [t.values.length] }]) {
      expect(h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(inputClaim(g, ok, bad))) }).error).toBe('Arbitration.InvalidProof')
    }
    expect(dispute(h).status).toBe('Open')
  }, 60_000)
})

describe('a NaN in a state tensor under a chunked state root', () => {
  /** `side` with its pre-state root chunked over `pre` (state tensor 0 replaced). */
  function chunkedState (side: Side, pre0: TensorData): { side: Side, pre: TensorData[] } {
    const pre = [pre0, ...run.before.slice(1)]
    const roots = side.roots.slice()
    roots[run.step] = toHex(chunkedStateRoot(pre, run.step))
    return { side: { ...side, roots }, pre }
  }
  function nanClaim (side: Side, pre: TensorData[], flat: number, opening: { chunk?: unknown, slice?: unknown }): Claim {
    const t = pre[0]
    return {
      v: 1,
      kind: 'nan',
      flat,
      ...opening,
      state: {
        index: run.step,
        root: fromHex(side.roots[run.step]),
        rootPath: merkleProof(side.roots.map(fromHex), run.step),
        t: 0,
        tensor: { dtype: t.dtype, shape: t.shape, chunkRoot: commitChunked(t).chunkRoot },
        tensorPath: merkleProof(chunkedStateLeaves(pre, run.step), 0)
      }
    } as Claim
  }

  it('is read from its chunk: the defender loses on the NaN, the challenger on a number, a row + column slice is refused', async () => {
    const f = 4099
    const v = (run.before[0].values as Float32Array).slice()
    new Uint32Array(v.buffer)[f] = 0x7fc00000
    const { side, pre } = chunkedState(tamperWeight(run), { ...run.before[0], values: v })
    const o = await opened(run, side)
    const adjudicate = (c: Claim): string | undefined => o.h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(c)) }).error
    // a slice cannot open a chunked commitment; another element's chunk does not hold it
    expect(adjudicate(nanClaim(side, pre, f, { slice: proveSlice(pre[0], 'row', Math.floor(f / matrixView(pre[0].shape).cols)) }))).toBe('Arbitration.InvalidClaim')
    expect(adjudicate(nanClaim(side, pre, f, { chunk: proveElementChunk(pre[0], 0) }))).toBe('Arbitration.InvalidClaim')
    expect(dispute(o.h).status).toBe('Open')
    expect(adjudicate(nanClaim(side, pre, f, { chunk: proveElementChunk(pre[0], f) }))).toBeUndefined()
    expect(dispute(o.h).status).toBe('ChallengerWon')
    const p = await opened(run, side)
    expect(p.h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(nanClaim(side, pre, f + 1, { chunk: proveElementChunk(pre[0], f + 1) }))) }).error).toBeUndefined()
    expect(dispute(p.h).status).toBe('DefenderWon')
  }, 60_000)
})
