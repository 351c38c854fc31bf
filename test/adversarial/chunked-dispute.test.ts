import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { combineChunked, commitChunked } from '../../protocols/commit/chunked.js'
import { ZERO_HASH, fromHex, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { stepLeaf } from '../../protocols/commit/state.js'
import { combineRoots, commitTensor, sizeOf, type TensorData } from '../../protocols/commit/tensor.js'
import { chunkTree, equivocationClaim, nodeAt, signAfter, treeLevels, type Body, type Claim, type Signed } from '../../protocols/dispute/index.js'
import type { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, nodeOf, pair, playDispute, playOnChain, tamperOp, taskOf, taskOnChain, verify, type Games, type Run, type Side } from '../unit/dispute/fixture.js'
import { chunkedRun, flipped, readOf, tamperChunked, writeOf } from '../unit/dispute/chunked-fixture.js'
import { adjudicateOrTimeout, challengerClaim, dispute, honestReply, mlpRun, msgOf, opened } from './setup.js'

// The dispute matrix under chunked state roots (docs/disputes.md "Chunked
// roots: design"): the tape links the chunked state to its ops by @StateRead
// and @StateWrite, and the game walks whichever side of a conversion the
// defender's tape differs on (rows or columns of a read's output, the chunks
// of a write's output) to one element, which the `convert` claim proves twice.
// Who gains by breaking it: a solver whose ops read a state other than its
// committed one, or whose committed post-state is not what its ops computed,
// and gets paid because no claim can reach the element (each such cheater
// must be slashed); a griefer forcing an honest defender into an answer it
// cannot give (an honest defender must never lose). The step is the MLP's
// (tests' setup.ts), its row + column tape laid out as the chunked one
// (chunked-fixture.ts); the chain is the real runtime (its claim judge is the
// same for any program: the game never reads the program's field).

let plain: Run
let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  plain = await mlpRun()
  run = chunkedRun(plain)
}, 120_000)

/** Elements worth naming in a tensor: the first, the first of its second chunk, the last. */
function elementsOf (t: TensorData): number[] {
  const n = sizeOf(t.shape)
  return [...new Set([0, ...(n > 1024 ? [1024] : []), n - 1])]
}

/** The cheater (Bob) lost its dispute and, past its window to reveal a forced error, its stake. */
function slashed (h: Harness): void {
  expect(dispute(h).status).toBe('ChallengerWon')
  expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
  expect(taskOf(h).solverFailed).toBe(true)
  expect(nodeOf(h, 'Bob').stake).toBeLessThan(10_000n * 10n ** 12n)
}

/** Bob's message `body` answering query `q`, signed as its defender would. */
function bobAnswers (g: Games, q: Signed, body: Body): Signed {
  const bob = pair('Bob')
  return signAfter({ ...g.ctx, account: bob.publicKey, sign: m => bob.sign(m) }, body, q, msgOf(q).seq)
}

/** Whether `q` asks for the roots of input/output k of entry e. */
function rootsQuery (q: Signed, e: number, io: 'in' | 'out', k: number): boolean {
  const m = msgOf(q)
  return m.t === 'query' && m.want === 'roots' && m.tree.e === e && 'io' in m.tree && m.tree.io === io && m.tree.k === k
}

describe('disputes over a chunked MLP step', () => {
  it('a defender reading one wrong state element (its @StateRead output is not its state): the challenger walks the output\'s rows and wins the convert claim; the cheater is slashed', async () => {
    for (let t = 0; t < run.before.length; t++) {
      for (const f of elementsOf(run.before[t])) {
        const { outcome, h } = await playOnChain(run, tamperChunked(run, readOf(run, t), f), honest(run))
        const where = `state tensor ${t} [${run.before[t].shape.join(',')}], element ${f}`
        expect(outcome.error, where).toBeUndefined()
        expect(outcome.claim?.kind, where).toBe('convert')
        expect((outcome.claim as Extract<Claim, { kind: 'convert' }>).flat, where).toBe(f)
        expect(outcome.claimBytes).toBeLessThanOrEqual(64 * 1024)
        slashed(h)
      }
    }
  }, 300_000)

  it('a defender writing one wrong post-state element (its @StateWrite output is not its op\'s): the challenger walks the chunk tree and wins the convert claim; the cheater is slashed', async () => {
    for (let t = 0; t < run.before.length; t++) {
      const post = run.values[run.values.length - 1].inputs[t]
      for (const f of elementsOf(post)) {
        const { outcome, h } = await playOnChain(run, tamperChunked(run, writeOf(run, t), f), honest(run))
        const where = `post-state tensor ${t} [${post.shape.join(',')}], element ${f}`
        expect(outcome.error, where).toBeUndefined()
        expect(outcome.claim?.kind, where).toBe('convert')
        const c = outcome.claim as Extract<Claim, { kind: 'convert' }>
        expect(c.flat, where).toBe(f)
        // the defender's chunk, the challenger's own row or column of the agreed input
        expect(c.chunk.index, where).toBe(Math.floor(f / 1024))
        slashed(h)
      }
    }
  }, 300_000)

  it('an inconsistent column tree under honest rows of a @StateRead output: the challenger walks the columns and wins the convert claim', async () => {
    // the cheater's ops reading the weight by columns (a transposed MatMul) would read `lie`, by rows the state
    const t = 0
    const r = readOf(run, t)
    const state = run.before[t]
    for (const f of [5, sizeOf(state.shape) - 1]) {
      const lie = flipped(state, f)
      const fake = toHex(combineRoots(state.dtype, state.shape, commitTensor(state).rowRoot, commitTensor(lie).colRoot))
      const entries = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => x.ref.kind === 'op' && x.ref.index === r ? { ...x, commitment: fake } : x), outputs: e.outputs.map(o => ({ ...o })) }))
      entries[r].outputs[0].commitment = fake
      const rows: Side = { entries, values: run.values, roots: run.roots }
      const cols: Side = { ...rows, values: run.values.map((v, i) => i === r ? { inputs: v.inputs, outputs: [lie] } : v) }
      const { h, g } = await opened(run, rows)
      const byCols = gamesFor(h, run, cols, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step })
      const reply = (q: Signed): Signed => {
        const m = msgOf(q)
        if (rootsQuery(q, r, 'out', 0)) {
          return bobAnswers(g, q, { t: 'roots', d: 0, tree: { e: r, io: 'out', k: 0 }, dtype: state.dtype, shape: state.shape, commitment: fromHex(fake), rowRoot: commitTensor(state).rowRoot, colRoot: commitTensor(lie).colRoot })
        }
        const col = m.t === 'query' && m.tree.e === r && 'axis' in m.tree && m.tree.axis === 'col'
        return honestReply(col ? byCols : g)(q)
      }
      const claim = challengerClaim(g, g.D.commit(), reply)
      expect(claim?.kind).toBe('convert')
      const c = claim as Extract<Claim, { kind: 'convert' }>
      expect([c.flat, c.slice.axis]).toEqual([f, 'col'])
      adjudicateOrTimeout(h, claim)
      slashed(h)
    }
  }, 120_000)

  describe('a header lie on a chunks answer', () => {
    // the cheater commits a post-state tensor under another shape (same bytes, same chunks): its root names a tensor of
    // another shape than the program's, which no claim under the entry's shape could open
    const t = 2
    function reshaped (): { side: Side, other: number[], fake: Uint8Array, w: number } {
      const post = run.values[run.values.length - 1].inputs[t]
      const other = [sizeOf(post.shape)]
      const fake = commitChunked({ ...post, shape: other }).root
      const w = writeOf(run, t)
      const entries = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
      entries[w].outputs[0].commitment = toHex(fake)
      const last = entries[entries.length - 1]
      last.inputs[t].commitment = toHex(fake)
      const root = toHex(merkleRoot([...last.inputs.map(x => fromHex(x.commitment)), stepLeaf(run.step + 1)]))
      const roots = [...run.roots.slice(0, run.step + 1), root, ...run.roots.slice(run.step + 2).map(() => root)]
      return { side: { entries, values: run.values, roots }, other, fake, w }
    }

    it('chunks under the header the commitment was made under (not the entry\'s): a lie against the entry; the cheater is slashed', async () => {
      const { side, other, fake, w } = reshaped()
      const { h, g } = await opened(run, side)
      const post = run.values[run.values.length - 1].inputs[t]
      const reply = (q: Signed): Signed => rootsQuery(q, w, 'out', 0)
        ? bobAnswers(g, q, { t: 'chunks', d: 0, tree: { e: w, io: 'out', k: 0 }, dtype: post.dtype, shape: other, commitment: fake, chunkRoot: commitChunked(post).chunkRoot })
        : honestReply(g)(q)
      const claim = challengerClaim(g, g.D.commit(), reply)
      expect(claim?.kind).toBe('lie')
      adjudicateOrTimeout(h, claim)
      slashed(h)
    }, 60_000)

    it('chunks under the entry\'s header: they open another commitment than the entry names; the cheater is slashed', async () => {
      const { side } = reshaped()
      const { h, g } = await opened(run, side)
      const claim = challengerClaim(g, g.D.commit(), honestReply(g))
      expect(claim?.kind).toBe('lie')
      adjudicateOrTimeout(h, claim)
      slashed(h)
    }, 60_000)
  })

  it('a zero node above a chunk (the chunk hidden from every claim: no slice of an empty leaf can be asked for): a lie against the chunks answer', async () => {
    const t = 0
    const w = writeOf(run, t)
    const post = run.values[run.values.length - 1].inputs[t]
    const leaves = chunkTree(post).leaves.slice()
    const hidden = 5
    leaves[hidden] = ZERO_HASH
    const levels = treeLevels(leaves)
    const chunkRoot = nodeAt(levels, 0, 0)
    const fake = combineChunked(post.dtype, post.shape, chunkRoot)
    const entries = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
    entries[w].outputs[0].commitment = toHex(fake)
    const last = entries[entries.length - 1]
    last.inputs[t].commitment = toHex(fake)
    const root = toHex(merkleRoot([...last.inputs.map(x => fromHex(x.commitment)), stepLeaf(run.step + 1)]))
    const side: Side = { entries, values: run.values, roots: [...run.roots.slice(0, run.step + 1), root, ...run.roots.slice(run.step + 2).map(() => root)] }
    const { h, g } = await opened(run, side)
    const depth = levels.length - 1
    const reply = (q: Signed): Signed => {
      const m = msgOf(q)
      if (rootsQuery(q, w, 'out', 0)) return bobAnswers(g, q, { t: 'chunks', d: 0, tree: { e: w, io: 'out', k: 0 }, dtype: post.dtype, shape: post.shape, commitment: fake, chunkRoot })
      if (m.t === 'query' && m.want === 'children' && m.tree.e === w && 'axis' in m.tree && m.tree.axis === 'chunk') {
        const { level, index } = m
        return bobAnswers(g, q, { t: 'nodes', d: 0, tree: m.tree, level, index, depth, node: nodeAt(levels, level, index), left: nodeAt(levels, level + 1, 2 * index), right: nodeAt(levels, level + 1, 2 * index + 1) })
      }
      return honestReply(g)(q)
    }
    const claim = challengerClaim(g, g.D.commit(), reply)
    expect(claim?.kind).toBe('lie')
    adjudicateOrTimeout(h, claim)
    slashed(h)
  }, 60_000)

  it('a defender saying another chunk at the same place (an equivocation forced on chain): the lie claim from the two, with its chunks answer, wins', async () => {
    const w = writeOf(run, 0)
    const { h, g } = await opened(run, tamperChunked(run, w, 1030))
    const heard: Signed[] = []
    let sliceQuery: Signed | undefined
    const reply = (q: Signed): Signed => {
      const m = msgOf(q)
      if (m.t === 'query' && m.want === 'slice') sliceQuery = q
      const a = honestReply(g)(q)
      heard.push(a)
      return a
    }
    expect(challengerClaim(g, g.D.commit(), reply)?.kind).toBe('convert')
    const said = heard[heard.length - 1]
    const m = msgOf(said)
    if (m.t !== 'slice' || sliceQuery === undefined) throw new Error('the walk did not end in a chunk')
    const other = m.bytes.slice()
    other[0] ^= 1
    const again = bobAnswers(g, sliceQuery, { t: 'slice', d: 0, tree: m.tree, index: m.index, bytes: other })
    const claim = equivocationClaim(said, again, [g.D.commit(), ...heard], { ctx: g.ctx, defender: pair('Bob').publicKey, verify })
    expect(claim?.kind).toBe('lie')
    adjudicateOrTimeout(h, claim)
    slashed(h)
  }, 60_000)

  it('an honest defender never loses: a challenger whose own read or write is wrong loses its bond', async () => {
    for (const i of [readOf(run, 0), readOf(run, 3), writeOf(run, 0), writeOf(run, 3)]) {
      const { outcome, h } = await playOnChain(run, honest(run), tamperChunked(run, i, 1))
      expect(outcome.claim?.kind, `entry ${i}`).toBe('convert')
      expect(outcome.status, `entry ${i}`).toBe('DefenderWon')
      expect(outcome.events).toContain('Arbitration.Slashed')
      expect(nodeOf(h, 'Bob').stake).toBe(10_000n * 10n ** 12n)
    }
  }, 120_000)

  it('a cheater answering only when forced: every chunks answer, chunk-tree node and chunk is forced and answered on chain by the transcript rule, and it still loses', async () => {
    for (const [i, f] of [[writeOf(run, 0), 1030], [readOf(run, 2), 7]]) {
      const { outcome, h } = await playOnChain(run, tamperChunked(run, i, f), honest(run), { defenderOffChainAfter: 1 })
      expect(outcome.error, `entry ${i}`).toBeUndefined()
      expect(outcome.claim?.kind, `entry ${i}`).toBe('convert')
      // every move after the commit went through force_move / answer_move
      expect(outcome.txs, `entry ${i}`).toBeGreaterThanOrEqual(outcome.moves)
      slashed(h)
    }
  }, 120_000)

  it('an op between the conversions still ends in an element claim; the cheater is slashed', async () => {
    const i = run.entries.findIndex(e => e.kernel === 'BatchMatMul' || e.kernel === '_FusedMatMul')
    const { outcome, h } = await playOnChain(run, tamperChunked(run, i, 0), honest(run))
    expect(outcome.claim?.kind).toBe('element')
    slashed(h)
  }, 60_000)
})

describe('a NaN in a chunked state', () => {
  /** The run with element `f` of state tensor `t` a NaN in its pre-state (`pre`) or post-state, chunked like the rest. */
  function withNaN (which: 'pre' | 'post', t: number, f: number): Run {
    const nan = (x: TensorData): TensorData => {
      const v = x.values.slice()
      new Uint32Array(v.buffer, v.byteOffset, v.length)[f] = 0x7fc00000
      return { ...x, values: v }
    }
    if (which === 'pre') return chunkedRun({ ...plain, before: plain.before.map((x, i) => i === t ? nan(x) : x) })
    const last = plain.values.length - 1
    const values = plain.values.map((v, i) => i === last ? { inputs: v.inputs.map((x, k) => k === t ? nan(x) : x), outputs: [] } : v)
    return chunkedRun({ ...plain, values })
  }

  it('is claimed from its chunk under the chunked state root (pre- and post-state): the defender loses', async () => {
    for (const which of ['pre', 'post'] as const) {
      const f = 1030
      const r = withNaN(which, 0, f)
      // the challenger holds the same tape (the defender's NaN is in the state both sides read or wrote)
      const { outcome, h } = await playOnChain(r, honest(r), honest(r), { nan: { stateNan: { which, t: 0, flat: f } } })
      expect(outcome.error, which).toBeUndefined()
      const c = outcome.claim as Extract<Claim, { kind: 'nan' }>
      expect([c.kind, c.chunk?.index, c.slice], which).toEqual(['nan', 1, undefined])
      slashed(h)
    }
  }, 60_000)
})

describe('a divergence point at a state conversion', () => {
  it('(an identity of NaN-free state makes no NaN) is claimed with the convert claim at the point: the solver loses', async () => {
    for (const entry of [readOf(run, 1), writeOf(run, 2)]) {
      const point = { entry, flat: 3 }
      const h = await taskOnChain(run, honest(run), { diverged: { stepCount: run.step, ...point }, verifiers: ['Dave', 'Eve'] })
      expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
      const o = playDispute(h, run, honest(run), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step, nan: { divergence: point } })
      expect(o.error, `entry ${entry}`).toBeUndefined()
      expect(o.claim?.kind, `entry ${entry}`).toBe('convert')
      slashed(h)
    }
  }, 60_000)
})

describe('a chunked answer in a non-chunked dispute', () => {
  it('an op output committed chunked and opened by a chunks answer (no row or column of it could be claimed): a lie against the entry; the cheater is slashed', async () => {
    const i = plain.entries.findIndex(e => e.kernel === 'Relu')
    const cheat = tamperOp(plain, i, 3)
    const out = cheat.values[i].outputs[0]
    const c = commitChunked(out)
    const entries = cheat.entries.map(e => ({ ...e, inputs: e.inputs.map(x => x.ref.kind === 'op' && x.ref.index === i && x.ref.output === 0 ? { ...x, commitment: toHex(c.root) } : x) }))
    entries[i] = { ...entries[i], outputs: [{ ...entries[i].outputs[0], commitment: toHex(c.root) }] }
    const side: Side = { ...cheat, entries }
    const { h, g } = await opened(plain, side)
    const reply = (q: Signed): Signed => rootsQuery(q, i, 'out', 0)
      ? bobAnswers(g, q, { t: 'chunks', d: 0, tree: { e: i, io: 'out', k: 0 }, dtype: out.dtype, shape: out.shape, commitment: c.root, chunkRoot: c.chunkRoot })
      : honestReply(g)(q)
    const claim = challengerClaim(g, g.D.commit(), reply)
    expect(claim?.kind).toBe('lie')
    adjudicateOrTimeout(h, claim)
    slashed(h)
  }, 60_000)
})
