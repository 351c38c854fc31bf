import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { conflictOf, continuationError, decodeMsg, factsOf, narrowingOf, schemeOf, signAfter, treeLayout, type Body, type Msg, type Signed, type TensorAxis } from '../../../protocols/dispute/index.js'
import { isStateConversion } from '../../../protocols/tape/state-io.js'
import { mlpRun } from '../../adversarial/setup.js'
import { chunkedRun } from './chunked-fixture.js'
import { gamesFor, honest, pair, taskOnChain, type Games, type Run } from './fixture.js'
import { depthOf } from '../../../protocols/dispute/tree.js'
import { checkForcedLeaf, forcedLeaf } from '../../../protocols/dispute/forced-leaf.js'
import { fromHex, merkleRoot, toHex } from '../../../protocols/commit/merkle.js'
import { revealProofFromTape } from '../../../node/dispute/forced-reveal.js'

// What the chain can force on an honest defender of a chunked tape: every
// query the transcript rule lets a challenger post (the roots of any tensor of
// any entry, then any node down its row, column or chunk tree) is answered by
// the honest defender with a message that continues it and contradicts
// nothing it signed, so no griefer can make it lose on time or on a lie
// claim. And the other way: a tape without conversions is answered by roots
// only, as before chunked state roots.

let plain: Run
let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  plain = await mlpRun()
  run = chunkedRun(plain)
}, 120_000)

const dave = pair('Dave')

/** Dave's query `body` after the defender's message `after`. */
function ask (g: Games, after: Signed, body: Body): Signed {
  return signAfter({ ...g.ctx, account: dave.publicKey, sign: m => dave.sign(m) }, body, after, decodeMsg(after.m).seq)
}

/** Every tensor of every entry: the honest answers to a roots query and down the first leaf of each of its trees. */
async function everyAnswer (r: Run): Promise<{ schemes: Map<string, string>, checked: number }> {
  const h = await taskOnChain(r, honest(r))
  const g = gamesFor(h, r, honest(r), honest(r), { disputeId: 0, challengerName: 'Dave', disputedStep: r.step })
  const commit = g.D.commit()
  const schemes = new Map<string, string>()
  let checked = 0
  const answer = (q: Signed): Msg => {
    const a = g.D.respond(decodeMsg(q.m), q).reply!
    const m = decodeMsg(a.m)
    const qm = decodeMsg(q.m)
    expect(continuationError(qm, m), `${JSON.stringify(qm)} answered by ${m.t}`).toBeUndefined()
    checked++
    return Object.assign(m, { signed: a })
  }
  const signedOf = (m: Msg): Signed => (m as Msg & { signed: Signed }).signed
  for (let e = 0; e < r.entries.length; e++) {
    const entry = answer(ask(g, commit, { t: 'query', d: 0, want: 'entry', tree: { e: -1 }, level: g.D.depth, index: e }))
    const spec = r.entries[e]
    for (const io of ['in', 'out'] as const) {
      for (let k = 0; k < (io === 'in' ? spec.inputs : spec.outputs).length; k++) {
        const q = ask(g, signedOf(entry), { t: 'query', d: 0, want: 'roots', tree: { e, io, k }, level: 0, index: 0 })
        expect(continuationError(entry, decodeMsg(q.m))).toBeUndefined()
        const head = answer(q)
        if (head.t !== 'roots' && head.t !== 'chunks') throw new Error(`entry ${e} ${io} ${k}: ${head.t}`)
        schemes.set(`${e}/${io}/${k}`, head.t)
        const said = [entry, head]
        expect(factsOf(said).selfContradiction).toBeUndefined()
        expect(conflictOf(factsOf(said).facts)).toBeUndefined()
        for (const axis of (head.t === 'chunks' ? ['chunk'] : ['row', 'col']) as TensorAxis[]) {
          const leaves = treeLayout(head.dtype, head.shape, axis).leaves
          if (leaves === 0) continue
          const depth = depthOf(leaves)
          // down to the first leaf and to the last (beside the padding)
          for (const leaf of new Set([0, leaves - 1])) {
            let prev: Msg = head
            const path: Msg[] = [entry, head]
            for (let level = 0; level <= depth; level++) {
              const tree = { e, io, k, axis }
              const index = leaf >> (depth - level)
              const body: Body = level < depth ? { t: 'query', d: 0, want: 'children', tree, level, index } : { t: 'query', d: 0, want: 'slice', tree, level, index }
              const qq = ask(g, signedOf(prev), body)
              expect(continuationError(prev, decodeMsg(qq.m)), `${e}/${io}/${k}/${axis} level ${level}`).toBeUndefined()
              prev = answer(qq)
              path.push(prev)
              if (prev.t === 'slice') break
            }
            const f = factsOf(path)
            expect(f.selfContradiction, `${e}/${io}/${k}/${axis} leaf ${leaf}`).toBeUndefined()
            expect(conflictOf(f.facts), `${e}/${io}/${k}/${axis} leaf ${leaf}`).toBeUndefined()
            const stages = narrowingOf(path).map(n => n.stage)
            expect(stages.length).toBe(path.length)
            if (depth > 0) expect(stages).toContain(axis === 'chunk' ? 'chunks' : axis === 'row' ? 'rows' : 'cols')
          }
        }
      }
    }
  }
  return { schemes, checked }
}

describe('an honest defender of a chunked tape', () => {
  it('answers every query the chain can force: chunks for a conversion\'s chunked side and the post-state, roots elsewhere; nothing contradicts', async () => {
    const { schemes, checked } = await everyAnswer(run)
    expect(checked).toBeGreaterThan(run.entries.length * 4)
    const last = run.entries.length - 1
    for (const [key, t] of schemes) {
      const [e, io, k] = key.split('/')
      const entry = run.entries[Number(e)]
      const scheme = schemeOf(entry, io as 'in' | 'out', Number(k))
      expect(t, key).toBe(scheme === 'chunked' || Number(e) === last ? 'chunks' : 'roots')
      if (isStateConversion(entry.kernel)) expect(scheme).toBeDefined()
    }
    expect([...schemes.values()].filter(t => t === 'chunks').length).toBe(3 * run.before.length)
  }, 120_000)

  it('a tape without conversions is answered by roots only, as before chunked state roots', async () => {
    const { schemes } = await everyAnswer(plain)
    expect([...schemes.values()].every(t => t === 'roots')).toBe(true)
  }, 120_000)
})

describe('a forced error in a chunked run', () => {
  it('is revealed from the defender\'s chunked tape: its honest post-state is the chunked root its @state entry lists', () => {
    const post = fromHex(run.roots[run.step + 1])
    const roots = run.roots.map((r, s) => s === run.step + 1 ? toHex(forcedLeaf(post)) : r)
    const tape = {
      step: run.step, entries: run.entries, values: run.values, preLeaves: [], batchRows: [],
      stateRootBefore: run.roots[run.step], stateRootAfter: run.roots[run.step + 1]
    }
    const ex = revealProofFromTape(tape, roots)
    if (!('bytes' in ex)) throw new Error(ex.error)
    const env = { step: run.step, proofRoot: merkleRoot(roots.map(fromHex)), stepCount: roots.length - 1 }
    expect(checkForcedLeaf({ ...env, honestPost: post }, ex.bytes)).toEqual({ ok: true })
    // an unmarked run has nothing to reveal
    expect(revealProofFromTape(tape, run.roots)).toMatchObject({ error: expect.stringMatching(/not the forced mark/) })
  })
})
