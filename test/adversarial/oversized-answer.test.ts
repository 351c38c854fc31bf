import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { leafHash, toHex } from '../../protocols/commit/merkle.js'
import { combineRoots, commitTensor, tensorLeafBytes, tensorLeaves } from '../../protocols/commit/tensor.js'
import { MAX_CLAIM_BYTES, encodeClaim, encodeEntryBytes, moveHash, nodeAt, treeLevels, type Claim, type Signed, type TensorTree } from '../../protocols/dispute/index.js'
import { MAX_ENTRY_BYTES, type TapeEntry } from '../../protocols/tape/tape.js'
import { signed } from '../helpers/dispute-msgs.js'
import type { Harness } from '../unit/chain/harness.js'
import { STAKE, nodeOf, tamperOp, type Games, type Run, type Side } from '../unit/dispute/fixture.js'
import { adjudicateOrTimeout, answer, challengerClaim, dispute, force, honestReply, mlpRun, msgOf, opened, tx, until, worth } from './setup.js'
import { u8aToHex } from '@polkadot/util'

// A claim is at most 64 KiB, and a skeleton claim's entry at most 32 KiB; a
// dispute message may be 256 KiB. A cheating solver commits a wrong post-state
// and, disputed, signs a tape whose first differing leaf is the hash of more
// bytes than a claim can carry: an entry of 40 KB (the honest one with a field
// of padding), or a row leaf of its wrong op output of 70 KB. The honest
// challenger's walk ends there, the cheater answers with those bytes, and the
// claim that shows them malformed (a skeleton claim, a lie against the roots'
// layout, an element claim) is refused for its size: the challenger lost its
// bond at the deadline, the cheat was paid. No honest entry or leaf is that
// large (an entry is at most MAX_ENTRY_BYTES, admissibility bounds every leaf by
// MAX_SLICE_BYTES), so now the transcript takes no longer answer: off chain the
// challenger forces the query, and on chain the cheater has no answer it may
// post (it would need a short preimage of its leaf) and loses by timeout.

let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

/** The claim on chain (one the chain refuses is as good as none); else a force the cheater left unanswered ends at its due block, or the dispute at its deadline. */
function settle (h: Harness, claim: Claim | undefined): void {
  if (claim !== undefined && tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim)) }) === undefined) return
  const f = dispute(h).force
  if (f === null || f.to !== 'Defender') { adjudicateOrTimeout(h, undefined); return }
  until(h, f.due + 1)
  expect(tx(h, 'Dave', 'claim_timeout')).toBeUndefined()
}

/** Plays the honest challenger against `reply`; a query it repeats (the answer was of no use) is forced on chain, where `onChain` is the cheater's attempt to answer it. */
function play (h: Harness, g: Games, reply: (q: Signed) => Signed, onChain: (q: Signed) => Signed): Claim | undefined {
  const asked = new Set<string>()
  let d: Signed = g.D.commit()
  return challengerClaim(g, d, q => (d = reply(q)), q => {
    const key = toHex(moveHash(q))
    if (!asked.has(key)) { asked.add(key); return false }
    // the challenger repeats its query: forced on chain, only an answer the transcript takes will do
    const p = g.C.pending!
    expect(p.mine).toBe(q)
    expect(force(h, 'Dave', p.theirs, q)).toBeUndefined()
    expect(answer(h, 'Bob', onChain(q))).toBe('Arbitration.NotAnAnswer')
    return true
  })
}

function expectCheaterLoses (h: Harness, daveBefore: bigint): void {
  expect(dispute(h).status).toBe('ChallengerWon')
  h.advance(REVEAL_WINDOW + 1)
  expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
  expect(worth(h, 'Dave')).toBeGreaterThanOrEqual(daveBefore)
}

describe('a cheater\'s differing leaf hashes more bytes than a claim can carry', () => {
  it('an entry of 40 KB: forced, the cheater cannot post it and is slashed at the due block', async () => {
    const i = run.entries.findIndex(e => e.kernel === 'BatchMatMul')
    const cheat: Side = tamperOp(run, i)
    cheat.entries[0] = { ...cheat.entries[0], pad: new Uint8Array(40_000) } as TapeEntry
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const reply = honestReply(g)
    // what a skeleton claim on it would have to carry
    expect(encodeEntryBytes(cheat.entries[0]).length).toBeGreaterThan(MAX_ENTRY_BYTES)
    settle(h, play(h, g, reply, reply))
    expectCheaterLoses(h, daveBefore)
  }, 120_000)

  it('a row leaf of 70 KB in the wrong op output: forced, the cheater cannot post it and is slashed at the due block', async () => {
    const i = run.entries.findIndex(e => e.kernel === 'BatchMatMul' && e.outputs[0].shape[0] >= 784)
    expect(i).toBeGreaterThanOrEqual(0)
    const cheat: Side = tamperOp(run, i)
    const out = cheat.values[i].outputs[0]
    const blob = new Uint8Array(70_000)
    blob.set(tensorLeafBytes(out, 'row', 0))
    const leaves = tensorLeaves(out, 'row'); leaves[0] = leafHash(blob)
    const levels = treeLevels(leaves)
    const colRoot = commitTensor(out).colRoot
    const commitment = combineRoots(out.dtype, out.shape, nodeAt(levels, 0, 0), colRoot)
    const old = cheat.entries[i].outputs[0].commitment
    for (const e of cheat.entries) {
      e.outputs.forEach(x => { if (x.commitment === old) x.commitment = toHex(commitment) })
      e.inputs.forEach(x => { if (x.commitment === old) x.commitment = toHex(commitment) })
    }
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const reply = (q: Signed): Signed => {
      const m = msgOf(q)
      if (m.t !== 'query' || m.tree.e !== i) return honestReply(g)(q)
      const tree = m.tree as TensorTree
      if (tree.io !== 'out' || tree.k !== 0) return honestReply(g)(q)
      if (m.want === 'roots') return signed('Bob', g.ctx, { t: 'roots', d: 0, tree: { e: i, io: 'out', k: 0 }, dtype: out.dtype, shape: out.shape, commitment, rowRoot: nodeAt(levels, 0, 0), colRoot }, q)
      if (tree.axis !== 'row') return honestReply(g)(q)
      if (m.want === 'children') return signed('Bob', g.ctx, { t: 'nodes', d: 0, tree, level: m.level, index: m.index, depth: levels.length - 1, node: nodeAt(levels, m.level, m.index), left: nodeAt(levels, m.level + 1, 2 * m.index), right: nodeAt(levels, m.level + 1, 2 * m.index + 1) }, q)
      return signed('Bob', g.ctx, { t: 'slice', d: 0, tree, index: m.index, bytes: m.index === 0 ? blob : tensorLeafBytes(out, 'row', m.index) }, q)
    }
    const claim = play(h, g, reply, reply)
    if (claim !== undefined) expect(encodeClaim(claim).length).toBeGreaterThan(MAX_CLAIM_BYTES)
    settle(h, claim)
    expectCheaterLoses(h, daveBefore)
  }, 120_000)
})
