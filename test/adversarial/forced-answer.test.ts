import { beforeAll, describe, expect, it } from 'vitest'
import { ZERO_HASH } from '../../protocols/commit/merkle.js'
import { MAX_SEQ, moveHash, verifySigned, type Body, type Msg, type Signed } from '../../protocols/dispute/index.js'
import { h32, signed } from '../helpers/dispute-msgs.js'
import { contextOn, pair, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { answer, dispute, force, mlpRun, opened, tx } from './setup.js'

// (d) A forced answer must answer the forced move: the chain checks seq,
// prev hash, author and that it is of the kind asked for (the same tree,
// level and index; protocols/dispute/transcript.ts). And a forced query must
// be answerable: a child of the node the defender answered, children above
// the leaves only, no slice of an empty leaf. Each test fails if the chain
// takes a move that does not continue the transcript.

let run: Run
let cheat: Side
beforeAll(async () => {
  run = await mlpRun()
  cheat = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
}, 120_000)

const bob = (): Uint8Array => pair('Bob').publicKey
const dave = (): Uint8Array => pair('Dave').publicKey
type Nodes = Extract<Msg, { t: 'nodes' }>
type Query = Extract<Msg, { t: 'query' }>
const body = <T extends Msg>(m: T): Body => { const { seq: _s, prev: _p, ...b } = m; return b as unknown as Body }

/** Plays commit, open, the root's children and the challenger's first query; the challenger forces that query. */
async function forcedQuery (): Promise<{ h: Awaited<ReturnType<typeof opened>>['h'], g: Awaited<ReturnType<typeof opened>>['g'], nodes: Signed, query: Signed, reply: Signed }> {
  const { h, g } = await opened(run, cheat)
  const commit = g.D.commit()
  const open = g.C.onMessage(verifySigned(commit, bob(), verify, g.ctx), commit) as { send: Signed }
  const nodes = g.D.respond(verifySigned(open.send, dave(), verify, g.ctx), open.send).reply!
  const q = g.C.onMessage(verifySigned(nodes, bob(), verify, g.ctx), nodes) as { send: Signed }
  expect(force(h, 'Dave', nodes, q.send)).toBeUndefined()
  expect(dispute(h).force).toMatchObject({ to: 'Defender', seq: 4 })
  const reply = g.D.respond(verifySigned(q.send, dave(), verify, g.ctx), q.send).reply!
  return { h, g, nodes, query: q.send, reply }
}

describe('a forced answer must be the answer to the pending move', () => {
  it('other nodes, another kind of message, a refusal, a wrong seq or prev, another signer or context: all refused; the true answer is taken', async () => {
    const { h, g, query, reply } = await forcedQuery()
    const q = verifySigned(query, dave(), verify, g.ctx) as Query
    const r = verifySigned(reply, bob(), verify, g.ctx) as Nodes
    expect(r).toMatchObject({ t: 'nodes', level: q.level, index: q.index })
    const wrong: Array<[string, Signed, string]> = [
      ['children of the sibling', signed('Bob', g.ctx, { ...body(r), index: r.index ^ 1 } as Body, query), 'NotAnAnswer'],
      ['children one level down', signed('Bob', g.ctx, { ...body(r), level: r.level + 1, index: 2 * r.index } as Body, query), 'NotAnAnswer'],
      ['an entry', signed('Bob', g.ctx, { t: 'entry', d: 0, index: q.index }, query), 'NotAnAnswer'],
      ['a refusal', signed('Bob', g.ctx, { t: 'refuse', d: 0, reason: 'busy' }, query), 'NotAnAnswer'],
      ['seq + 2', signed('Bob', g.ctx, body(r), query, { seq: r.seq + 2 }), 'NotAnAnswer'],
      ['a prev that is not the query', signed('Bob', g.ctx, body(r), query, { prev: h32(3) }), 'NotAnAnswer'],
      ['signed for another dispute', signed('Bob', contextOn(h, 7), body(r), query), 'InvalidMove'],
      ['signed by the challenger', signed('Dave', g.ctx, body(r), query), 'InvalidMove']
    ]
    for (const [what, s, err] of wrong) expect(answer(h, 'Bob', s), what).toBe(`Arbitration.${err}`)
    expect(dispute(h).force).not.toBeNull()
    expect(answer(h, 'Bob', reply)).toBeUndefined()
    expect(dispute(h)).toMatchObject({ force: null, nextSeq: 5 })
    // what is on chain cannot be rewound: forcing the opening again is stale
    expect(force(h, 'Dave', g.D.commit(), signed('Dave', g.ctx, { t: 'open', d: 0, step: run.step, pre: h32(1), post: h32(2) }, g.D.commit()))).toBe('Arbitration.StaleMove')
  })

  it('a forced query must be answerable: a child of the answered node, children only above the leaves, no slice of an empty leaf', async () => {
    const { h, g } = await opened(run, cheat)
    const commit = g.D.commit()
    const c = verifySigned(commit, bob(), verify, g.ctx)
    const open = signed('Dave', g.ctx, { t: 'open', d: 0, step: run.step, pre: h32(1), post: h32(2) }, commit)
    // a tape node one level above the leaves, and a tensor node whose right child is an empty leaf
    const tapeNodes = signed('Bob', g.ctx, { t: 'nodes', d: 0, tree: { e: -1 }, level: 0, index: 0, depth: 1, node: h32(5), left: h32(6), right: h32(7) }, open)
    const q = (want: Query['want'], level: number, index: number, tree: Query['tree'] = { e: -1 }): Signed => signed('Dave', g.ctx, { t: 'query', d: 0, want, tree, level, index }, tapeNodes)
    expect((c as Extract<Msg, { t: 'commit' }>).depth).toBeGreaterThan(1)
    expect(force(h, 'Dave', tapeNodes, q('children', 1, 0))).toBe('Arbitration.NotAnAnswer') // level 1 is the leaves of a depth-1 tree
    expect(force(h, 'Dave', tapeNodes, q('entry', 1, 2))).toBe('Arbitration.NotAnAnswer') // not a child of node 0:0
    expect(force(h, 'Dave', tapeNodes, q('entry', 2, 0))).toBe('Arbitration.NotAnAnswer') // skips a level
    expect(force(h, 'Dave', tapeNodes, q('slice', 1, 0))).toBe('Arbitration.NotAnAnswer') // the tape has entries, not slices
    expect(force(h, 'Dave', tapeNodes, q('entry', 1, 1, { e: 3, io: 'out', k: 0, axis: 'row' }))).toBe('Arbitration.NotAnAnswer') // another tree
    const tensor = { e: 3, io: 'out' as const, k: 0, axis: 'row' as const }
    const tensorNodes = signed('Bob', g.ctx, { t: 'nodes', d: 0, tree: tensor, level: 0, index: 0, depth: 1, node: h32(5), left: h32(6), right: ZERO_HASH }, open)
    const tq = (index: number): Signed => signed('Dave', g.ctx, { t: 'query', d: 0, want: 'slice', tree: tensor, level: 1, index }, tensorNodes)
    expect(force(h, 'Dave', tensorNodes, tq(1))).toBe('Arbitration.NotAnAnswer') // the empty leaf
    expect(dispute(h).moves).toBe(0)
    // the answerable one is taken
    expect(force(h, 'Dave', tapeNodes, q('entry', 1, 1))).toBeUndefined()
    expect(dispute(h).force).toMatchObject({ to: 'Defender', seq: 4 })
  })

  it('sequence numbers are bounded and the author parity is fixed: an even message is the defender\'s', async () => {
    const { h, g } = await opened(run, cheat)
    const commit = g.D.commit()
    // the challenger cannot post a message in the defender's place in the transcript
    const asDefender = signed('Dave', g.ctx, { t: 'open', d: 0, step: run.step, pre: h32(1), post: h32(2) }, commit, { seq: 2, prev: moveHash(commit) })
    expect(force(h, 'Dave', commit, asDefender)).toBe('Arbitration.InvalidMove')
    const beyond = signed('Dave', g.ctx, { t: 'open', d: 0, step: run.step, pre: h32(1), post: h32(2) }, commit, { seq: MAX_SEQ + 1 })
    expect(force(h, 'Dave', commit, beyond)).toBe('Arbitration.InvalidMove')
    expect(tx(h, 'Eve', 'claim_timeout')).toBe('Arbitration.NotExpired')
  })
})
