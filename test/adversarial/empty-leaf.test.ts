import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { ZERO_HASH, leafHash, merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { axisLayout, combineRoots, commitTensor, tensorLeafBytes, tensorLeaves, type TensorData } from '../../protocols/commit/tensor.js'
import { continuationError, encodeClaim, factsOf, type Claim, type Msg, type Signed, type TensorTree } from '../../protocols/dispute/index.js'
import { nodeAt, treeLevels } from '../../protocols/dispute/tree.js'
import { signed } from '../helpers/dispute-msgs.js'
import { STAKE, nodeOf, tamperOp, type Games, type Run, type Side } from '../unit/dispute/fixture.js'
import type { Harness } from '../unit/chain/harness.js'
import { adjudicateOrTimeout, challengerClaim, dispute, force, honestReply, mlpRun, msgOf, opened, tx, worth } from './setup.js'

// A tensor's row (column) tree is padded with zero hashes to a power of two,
// and the chain never forces a slice of a zero leaf (an honest defender has
// none to give). A cheating solver commits a wrong post-state and, disputed,
// signs a tape whose first wrong op output is committed over a row tree that
// does not follow the layout its header gives: the leaf holding the wrong
// element replaced by the zero hash, or the whole tree zero, or a padding leaf
// given bytes, or a leaf of other bytes than its rows. The honest challenger's
// walk ends at that leaf and then had nothing: the slice of a zero leaf cannot
// be forced (`an empty leaf has no slice`), a slice past the last row fits no
// claim (its own play broke on it), a leaf of the wrong length verifies in no
// claim (`InvalidProof`). It lost its bond at the deadline; the cheater, who
// computed the step up to one op, was paid. Now a node (or root) at a position
// the roots' header gives rows for must not be zero, one above padding must
// be, and a slice must hold its leaf's bytes exactly: otherwise the answer
// contradicts the roots, and the challenger's `lie` claim wins.

let run: Run
/** the first op output with a padded row tree (196 leaves of 4 rows: the 784×128 kernel's gradient) */
let i: number
beforeAll(async () => {
  run = await mlpRun()
  i = run.entries.findIndex(e => {
    const o = e.outputs[0]
    if (o === undefined || o.dtype !== 'float32') return false
    const n = axisLayout(o.dtype, o.shape, 'row').leaves
    return n >= 3 && (n & (n - 1)) !== 0
  })
}, 120_000)

/** How the cheater's row tree of output 0 of entry i is made: its nodes, and the bytes it reveals for a leaf (none: it refuses). */
interface FakeRows { node: (level: number, index: number) => Uint8Array, depth: number, bytes: (leaf: number) => Uint8Array | undefined, colRoot: Uint8Array }

function fromLeaves (leaves: Uint8Array[], bytes: (leaf: number) => Uint8Array | undefined, colRoot: Uint8Array): FakeRows {
  const levels = treeLevels(leaves)
  return { node: (l, x) => nodeAt(levels, l, x), depth: levels.length - 1, bytes, colRoot }
}

/** A tampered step (element 0 of entry i's output + 1, everything after it recomputed) whose entry i output commits `rows`. */
function cheater (rows: (wrong: TensorData, right: TensorData) => FakeRows): { side: Side, fake: FakeRows, commitment: Uint8Array } {
  const side = tamperOp(run, i)
  const out = side.values[i].outputs[0]
  const fake = rows(out, run.values[i].outputs[0])
  const commitment = combineRoots(out.dtype, out.shape, fake.node(0, 0), fake.colRoot)
  const old = side.entries[i].outputs[0].commitment
  side.entries[i].outputs[0].commitment = toHex(commitment)
  for (const e of side.entries) e.inputs.forEach(x => { if (x.commitment === old) x.commitment = toHex(commitment) })
  return { side, fake, commitment }
}

/** The cheater's answers: its fake row tree of entry i's output, the tampered tape otherwise. */
const cheaterReply = (g: Games, c: ReturnType<typeof cheater>) => (q: Signed): Signed => {
  const m = msgOf(q)
  if (m.t !== 'query' || m.tree.e !== i) return honestReply(g)(q)
  const tree = m.tree as TensorTree
  if (tree.io !== 'out' || tree.k !== 0) return honestReply(g)(q)
  const out = run.values[i].outputs[0]
  if (m.want === 'roots') return signed('Bob', g.ctx, { t: 'roots', d: 0, tree: { e: i, io: 'out', k: 0 }, dtype: out.dtype, shape: out.shape, commitment: c.commitment, rowRoot: c.fake.node(0, 0), colRoot: c.fake.colRoot }, q)
  if (tree.axis !== 'row') return honestReply(g)(q)
  if (m.want === 'children') {
    return signed('Bob', g.ctx, { t: 'nodes', d: 0, tree, level: m.level, index: m.index, depth: c.fake.depth, node: c.fake.node(m.level, m.index), left: c.fake.node(m.level + 1, 2 * m.index), right: c.fake.node(m.level + 1, 2 * m.index + 1) }, q)
  }
  const b = c.fake.bytes(m.index)
  return signed('Bob', g.ctx, b === undefined ? { t: 'refuse', d: 0, reason: 'no slice of an empty leaf' } : { t: 'slice', d: 0, tree, index: m.index, bytes: b }, q)
}

/** The claim on chain; one the chain refuses is as good as none: the dispute runs to its deadline. */
function settle (h: Harness, claim: Claim | undefined): void {
  if (claim !== undefined && tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim)) }) === undefined) return
  adjudicateOrTimeout(h, undefined)
}

const variants: Array<[string, (wrong: TensorData, right: TensorData) => FakeRows]> = [
  ['the wrong element\'s leaf is the zero hash', wrong => {
    const leaves = tensorLeaves(wrong, 'row'); leaves[0] = ZERO_HASH
    return fromLeaves(leaves, l => l === 0 ? undefined : tensorLeafBytes(wrong, 'row', l), commitTensor(wrong).colRoot)
  }],
  ['the whole row tree is the zero hash', wrong => ({ node: () => ZERO_HASH, depth: treeLevels(tensorLeaves(wrong, 'row')).length - 1, bytes: () => undefined, colRoot: commitTensor(wrong).colRoot })],
  ['a padding leaf holds bytes (the rows are honest)', (_wrong, right) => {
    const extra = tensorLeafBytes(right, 'row', 0)
    const leaves = [...tensorLeaves(right, 'row'), leafHash(extra)]
    const n = leaves.length - 1
    return fromLeaves(leaves, l => l === n ? extra : l < n ? tensorLeafBytes(right, 'row', l) : undefined, commitTensor(right).colRoot)
  }],
  ['the wrong element\'s leaf holds four bytes more than its rows', wrong => {
    const long = new Uint8Array([...tensorLeafBytes(wrong, 'row', 0), 0, 0, 0, 0])
    const leaves = tensorLeaves(wrong, 'row'); leaves[0] = leafHash(long)
    return fromLeaves(leaves, l => l === 0 ? long : tensorLeafBytes(wrong, 'row', l), commitTensor(wrong).colRoot)
  }]
]

describe('a cheater commits an op output over a row tree that does not follow its header\'s layout', () => {
  for (const [what, rows] of variants) {
    it(`${what}: the challenger claims the lie against the roots and wins; the cheater is slashed`, async () => {
      expect(i).toBeGreaterThanOrEqual(0)
      const c = cheater(rows)
      const { h, g } = await opened(run, c.side)
      const daveBefore = worth(h, 'Dave')
      let d: Signed = g.D.commit()
      let claim: Claim | undefined
      try {
        claim = challengerClaim(g, d, q => (d = cheaterReply(g, c)(q)), q => {
          const m = msgOf(q)
          if (m.t !== 'query' || m.want !== 'slice' || c.fake.bytes(m.index) !== undefined) return false
          // refused off chain, and the chain will not force a slice of a zero leaf
          expect(force(h, 'Dave', d, q)).toBe('Arbitration.NotAnAnswer')
          return true
        })
      } catch {
        // the challenger's own play broke on the cheater's leaf: it has no claim
        claim = undefined
      }
      settle(h, claim)
      expect(dispute(h).status).toBe('ChallengerWon')
      expect(claim?.kind).toBe('lie')
      expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
      expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
    }, 120_000)
  }
})

describe('an empty tensor (a zero dimension): no admissible program has one, the rules hold for it anyway', () => {
  const link = { seq: 0, prev: ZERO_HASH }
  const empty: TensorData = { dtype: 'float32', shape: [0, 5], values: new Float32Array(0) }
  const c = commitTensor(empty)
  const roots = (rowRoot: Uint8Array): Msg => ({ t: 'roots', d: 0, tree: { e: 0, io: 'out', k: 0 }, dtype: 'float32', shape: [0, 5], commitment: combineRoots('float32', [0, 5], rowRoot, c.colRoot), rowRoot, colRoot: c.colRoot, ...link })
  it('a griefer cannot force a slice of its empty row tree on an honest defender (it has no leaf to give)', () => {
    expect(c.rowRoot).toEqual(ZERO_HASH)
    const q: Msg = { t: 'query', d: 0, want: 'slice', tree: { e: 0, io: 'out', k: 0, axis: 'row' }, level: 0, index: 0, seq: 1, prev: ZERO_HASH }
    expect(continuationError(roots(c.rowRoot), q)).toMatch(/empty tensor/)
    // its columns hold no bytes: the one query there is still answerable
    const cols: Msg = { t: 'query', d: 0, want: 'children', tree: { e: 0, io: 'out', k: 0, axis: 'col' }, level: 0, index: 0, seq: 1, prev: ZERO_HASH }
    expect(continuationError(roots(c.rowRoot), cols)).toBeUndefined()
  })
  it('a row root with bytes for no rows, or a slice of an empty column with bytes, is a lie', () => {
    expect(factsOf([roots(merkleRoot([leafHash(new Uint8Array(4))]))]).selfContradiction).toMatch(/row root/)
    expect(factsOf([roots(c.rowRoot)]).selfContradiction).toBeUndefined()
    const slice = (bytes: Uint8Array): Msg => ({ t: 'slice', d: 0, tree: { e: 0, io: 'out', k: 0, axis: 'col' }, index: 2, bytes, seq: 2, prev: ZERO_HASH })
    expect(factsOf([roots(c.rowRoot), slice(new Uint8Array(4))]).selfContradiction).toMatch(/4 bytes, its leaf 0/)
    expect(factsOf([roots(c.rowRoot), slice(new Uint8Array(0))]).selfContradiction).toBeUndefined()
  })
})
