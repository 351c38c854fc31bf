import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleProof, sha256 } from '../../protocols/commit/merkle.js'
import { stateLeaves } from '../../protocols/commit/state.js'
import { commitTensor, proveSlice, type TensorData } from '../../protocols/commit/tensor.js'
import { decodeMsg, encodeClaim, encodeEntryBytes, pathWith, treeLevels, type Claim, type NanClaim } from '../../protocols/dispute/index.js'
import { gamesFor, honest, honestRun, playOnChain, type Run } from '../unit/dispute/fixture.js'
import { dispute, mlpRun, nanRun, opened } from './setup.js'

// "A NaN ends the run": an honest run commits no NaN, in a state tensor or an
// op output of a signed tape. A solver that trains on through a NaN (it
// should have ended its run with a diverged proof) loses a dispute of the
// step that made it, or of any later step, to a challenger that computed the
// very same NaNs (same roots: the dispute is about legitimacy, not a
// different value). A challenger's `nan` claim against a NaN-free tape loses.

let bad: Awaited<ReturnType<typeof nanRun>>
let clean: Run

beforeAll(async () => {
  await cryptoWaitReady()
  bad = await nanRun()
  clean = await mlpRun()
}, 120_000)

const head = (t: TensorData): { dtype: 'float32', shape: number[], rowRoot: Uint8Array, colRoot: Uint8Array } => {
  const c = commitTensor(t)
  return { dtype: 'float32', shape: [...t.shape], rowRoot: c.rowRoot, colRoot: c.colRoot }
}

describe('a solver that trains on through a NaN loses', () => {
  it('at the step that made it: the challenger computed the same tape and points at the first NaN op output', async () => {
    expect(bad.k).toBeLessThan(bad.program.steps - 1)
    const { outcome } = await playOnChain(bad.run, honest(bad.run), honest(bad.run), { nan: { firstNan: bad.first } })
    expect(outcome.error).toBeUndefined()
    expect(outcome.claim?.kind).toBe('nan')
    expect(outcome.status).toBe('ChallengerWon')
    expect(outcome.txs).toBe(1)
  })

  it('at a later step: a NaN in its committed pre-state', async () => {
    const run = await honestRun(bad.program, bad.ds, bad.k + 1)
    const t = run.before.findIndex(x => (x.values as Float32Array).some(v => Number.isNaN(v)))
    expect(t).toBeGreaterThanOrEqual(0)
    const flat = (run.before[t].values as Float32Array).findIndex(v => Number.isNaN(v))
    const { outcome } = await playOnChain(run, honest(run), honest(run), { disputedStep: bad.k + 1, nan: { stateNan: { which: 'pre', t, flat } } })
    expect(outcome.error).toBeUndefined()
    expect((outcome.claim as NanClaim).state?.index).toBe(bad.k + 1)
    expect(outcome.status).toBe('ChallengerWon')
  })
})

describe('a nan claim against a NaN-free tape loses for the challenger', () => {
  function claimOn (h: Awaited<ReturnType<typeof opened>>['h'], claim: Claim): string | undefined {
    return h.run('Dave', 'Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(encodeClaim(claim)) }).error
  }

  it('an op output element, a pre-state element, a post-state element: each is not a NaN', async () => {
    const entryIdx = 1
    const out = clean.values[entryIdx].outputs[0]
    const levels = treeLevels(clean.entries.map(e => sha256(encodeEntryBytes(e))))
    const last = clean.values.length - 1
    const after = clean.values[last].inputs
    const roots = clean.roots.map(fromHex)
    const claims: Claim[] = []
    {
      const { g } = await opened(clean, honest(clean))
      claims.push({ v: 1, kind: 'nan', flat: 0, slice: proveSlice(out, 'row', 0), op: { commit: g.D.commit(), index: entryIdx, entry: encodeEntryBytes(clean.entries[entryIdx]), path: pathWith(levels, new Map(), entryIdx) } })
    }
    claims.push({ v: 1, kind: 'nan', flat: 0, slice: proveSlice(clean.before[0], 'row', 0), state: { index: clean.step, root: roots[clean.step], rootPath: merkleProof(roots, clean.step), t: 0, tensor: head(clean.before[0]), tensorPath: merkleProof(stateLeaves(clean.before, clean.step), 0) } })
    claims.push({ v: 1, kind: 'nan', flat: 0, slice: proveSlice(after[0], 'row', 0), state: { index: clean.step + 1, root: roots[clean.step + 1], rootPath: merkleProof(roots, clean.step + 1), t: 0, tensor: head(after[0]), tensorPath: merkleProof(stateLeaves(after, clean.step + 1), 0) } })
    for (const c of claims) {
      const { h, g } = await opened(clean, honest(clean))
      // the op claim carries the commit of the first game; re-sign it for this chain's dispute
      const n = c as Extract<Claim, { kind: 'nan' }>
      const claim = n.op !== undefined ? { ...n, op: { ...n.op, commit: g.D.commit() } } : c
      expect(claimOn(h, claim)).toBeUndefined()
      expect(dispute(h).status).toBe('DefenderWon')
    }
  })

  it('a slice edited to hold a NaN does not verify', async () => {
    const { h } = await opened(clean, honest(clean))
    const after = clean.values[clean.values.length - 1].inputs
    const roots = clean.roots.map(fromHex)
    const s = proveSlice(after[0], 'row', 0)
    const bytes = s.bytes.slice(); new DataView(bytes.buffer).setUint32(0, 0x7fc00000, true)
    const claim: Claim = { v: 1, kind: 'nan', flat: 0, slice: { ...s, bytes }, state: { index: clean.step + 1, root: roots[clean.step + 1], rootPath: merkleProof(roots, clean.step + 1), t: 0, tensor: head(after[0]), tensorPath: merkleProof(stateLeaves(after, clean.step + 1), 0) } }
    expect(claimOn(h, claim)).toBe('Arbitration.InvalidProof')
    expect(dispute(h).status).toBe('Open')
  })

  it('a state other than the disputed step\'s pre- or post-state is refused (a ruling slashes the verdicts that checked that step)', async () => {
    const { h } = await opened(clean, honest(clean))
    const roots = clean.roots.map(fromHex)
    const claim: Claim = { v: 1, kind: 'nan', flat: 0, slice: proveSlice(clean.before[0], 'row', 0), state: { index: clean.step - 1, root: roots[clean.step - 1], rootPath: merkleProof(roots, clean.step - 1), t: 0, tensor: head(clean.before[0]), tensorPath: [] } }
    expect(claimOn(h, claim)).toBe('Arbitration.InvalidClaim')
  })

  it('the honest game finds no NaN to claim on a NaN-free run', async () => {
    const { h } = await opened(clean, honest(clean))
    const g = gamesFor(h, clean, honest(clean), honest(clean), { disputeId: 0, challengerName: 'Dave', disputedStep: clean.step })
    const commit = g.D.commit()
    expect(g.C.onMessage(decodeMsg(commit.m), commit)).toHaveProperty('claim.kind', 'state')
  })
})
