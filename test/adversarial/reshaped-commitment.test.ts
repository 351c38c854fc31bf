import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { commitTensor, type DType, type TensorData } from '../../protocols/commit/tensor.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../../protocols/tape/tape.js'
import { verifySigned, type Signed } from '../../protocols/dispute/index.js'
import { signed } from '../helpers/dispute-msgs.js'
import { STAKE, honest, nodeOf, pair, playOnChain, taskOf, tamperWeight, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { adjudicateOrTimeout, challengerClaim, dispute, mlpRun, msgOf, opened, worth } from './setup.js'

// A tensor commitment binds its dtype and shape (combineRoots hashes a header
// with the row and column roots), and the row/column trees of shapes [a, b]
// and [a, 1, b] (or of float32 and int32 bytes) are the same. A cheating
// solver commits a wrong post-state and, disputed, signs a tape that is the
// honest one up to entry i, whose output commitment is the honest data's
// under another header (its declared shape, the skeleton's, unchanged). The
// challenger's walk stops at entry i, asks for that output's roots, and gets
// the honest row and column roots with the other header: they combine to the
// signed commitment, so nothing was provably false, and they equal its own,
// so there was no row or column to descend into. No claim could be made (an
// element claim proves slices against the commitment under the entry's shape)
// and the honest challenger lost at the deadline: the cheater was paid for a
// wrong proof after computing one op of the step. Now the header a `roots`
// message states is a fact, and so is the header the entry declares for that
// tensor: differing, they are a `lie`.

let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

/** The cheater: a wrong post-state (tamperWeight) and, in its tape, output 0 of entry `i` committed under another header. */
function otherHeader (i: number, header: (t: TensorData) => { shape: number[], dtype: DType }): Side {
  const base = tamperWeight(run)
  const values = base.values.map(v => ({ inputs: v.inputs, outputs: v.outputs }))
  const entries: TapeEntry[] = base.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
  const o = values[i].outputs[0]
  const re = { ...o, ...header(o) } as TensorData
  values[i] = { inputs: values[i].inputs, outputs: [re, ...values[i].outputs.slice(1)] }
  const c = toHex(commitTensor(re).root)
  entries[i].outputs[0].commitment = c
  // the entries reading it name that commitment too
  for (const e of entries) e.inputs.forEach(x => { if (x.ref.kind === 'op' && x.ref.index === i && x.ref.output === 0) x.commitment = c })
  return { entries, values, roots: base.roots }
}

const first = (): number => run.entries.findIndex(e => e.kernel !== STATE_PSEUDO_KERNEL && e.outputs.length > 0 && e.outputs[0].dtype === 'float32')
const withUnitAxis = (t: TensorData): { shape: number[], dtype: DType } =>
  ({ dtype: t.dtype, shape: t.shape.length === 0 ? [1] : [...t.shape.slice(0, -1), 1, t.shape[t.shape.length - 1]] })
const asInt = (t: TensorData): { shape: number[], dtype: DType } => ({ dtype: 'int32', shape: t.shape })

describe('a cheater commits an op output under another shape or dtype than its entry declares', () => {
  for (const [what, header] of [['an extra unit axis', withUnitAxis], ['int32 instead of float32', asInt]] as const) {
    it(`${what}: the roots are a lie against the entry; the cheater loses its claim and is slashed`, async () => {
      const i = first()
      expect(i).toBeGreaterThanOrEqual(0)
      const cheat = otherHeader(i, header)
      // the premise: the same row and column roots as the honest tensor, another commitment
      const mine = commitTensor(run.values[i].outputs[0]); const theirs = commitTensor(cheat.values[i].outputs[0])
      expect([toHex(theirs.rowRoot), toHex(theirs.colRoot)]).toEqual([toHex(mine.rowRoot), toHex(mine.colRoot)])
      expect(toHex(theirs.root)).not.toBe(toHex(mine.root))
      const { h, g } = await opened(run, cheat)
      const daveBefore = worth(h, 'Dave')
      // the cheater's node answers a roots query with the header its commitment was made under
      const respond = (q: Signed): Signed => {
        const r = g.D.respond(verifySigned(q, pair('Dave').publicKey, verify, g.ctx), q).reply!
        const m = msgOf(r)
        if (m.t !== 'roots') return r
        const t = cheat.values[m.tree.e][m.tree.io === 'in' ? 'inputs' : 'outputs'][m.tree.k]
        return signed('Bob', g.ctx, { t: 'roots', d: 0, tree: m.tree, dtype: t.dtype, shape: [...t.shape], commitment: m.commitment, rowRoot: m.rowRoot, colRoot: m.colRoot }, q)
      }
      const claim = challengerClaim(g, g.D.commit(), respond)
      adjudicateOrTimeout(h, claim)
      expect(dispute(h).status).toBe('ChallengerWon')
      expect(claim?.kind).toBe('lie')
      expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
      expect(taskOf(h).solverFailed).toBe(true)
      expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
    }, 120_000)
  }

  it('an honest defender\'s roots state its entry\'s header: no lie to claim', async () => {
    // the honest tape against a challenger whose post-state differs (a wrong computation of its own): it loses
    const { outcome } = await playOnChain(run, honest(run), tamperWeight(run))
    expect(outcome.status).toBe('DefenderWon')
  }, 120_000)
})
