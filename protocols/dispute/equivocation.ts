import { bytesEqual } from '../commit/merkle.js'
import type { Claim } from './claim-kinds.js'
import { conflictOf, factsOf } from './facts.js'
import { verifySigned, type DisputeContext, type Msg, type Signed, type TensorTree, type VerifyFn } from './messages.js'

// A defender that forces on chain another message than the one the challenger
// answered off chain (same seq, so the challenger's next move, linked to the
// first, answers nothing on chain): the two are one place of its transcript
// said twice. Messages have one encoding (messages.ts), so two different ones
// there state different facts, and the `lie` claim wins; it carries what fixes
// their place when that is not in them: the commit (an entry's tape leaf) and
// the tree's roots or chunks (a slice's leaf, by the layout they state).

/**
 * The `lie` claim from the defender's message we answered (`heard`) and the one
 * it forced at the same seq (`onChain`), with `context` (its other messages we
 * heard) to draw the commit and roots from; undefined when they do not conflict.
 */
export function equivocationClaim (
  heard: Signed, onChain: Signed, context: readonly Signed[], o: { ctx: DisputeContext, defender: Uint8Array, verify: VerifyFn }
): Claim | undefined {
  if (bytesEqual(heard.m, onChain.m)) return undefined
  const read = (s: Signed): Msg | undefined => { try { return verifySigned(s, o.defender, o.verify, o.ctx) } catch { return undefined } }
  const a = read(heard); const b = read(onChain)
  if (a === undefined || b === undefined || a.seq !== b.seq) return undefined
  const tree = (m: Msg): TensorTree | undefined => (m.t === 'nodes' || m.t === 'slice') && m.tree.e !== -1 ? m.tree as TensorTree : undefined
  const t = tree(a) ?? tree(b)
  const commit = context.find(s => read(s)?.t === 'commit')
  // a row or column tree's layout is stated by its roots, a chunk tree's by its chunks
  const head = t?.axis === 'chunk' ? 'chunks' : 'roots'
  const roots = t === undefined
    ? undefined
    : context.find(s => { const m = read(s); return m?.t === head && m.tree.e === t.e && m.tree.io === t.io && m.tree.k === t.k })
  const extra = [commit, roots].filter((s): s is Signed => s !== undefined)
  for (const msgs of [[heard, onChain], ...extra.map(x => [x, heard, onChain]), [...extra, heard, onChain]]) {
    if (msgs.length > 4) continue
    const { facts, selfContradiction } = factsOf(msgs.map(s => read(s)!))
    if (selfContradiction !== undefined || conflictOf(facts) !== undefined) return { v: 1, kind: 'lie', msgs }
  }
  return undefined
}
