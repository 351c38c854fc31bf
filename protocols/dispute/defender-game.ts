import { commitChunked } from '../commit/chunked.js'
import { fromHex, merkleProof, sha256, toHex } from '../commit/merkle.js'
import { commitTensor } from '../commit/tensor.js'
import type { Claim } from './claim.js'
import { type Body, type Msg, type Signed, type TensorTree, type TreeId } from './messages.js'
import { TensorCache, encodeEntryBytes, leafIndex, signAfter, type PlayerInit, type ProofSpacing } from './player.js'
import { nodeAt, treeLevels, type Levels } from './tree.js'
import { samePre } from './forced-leaf.js'
import { initialRootCheckable } from './claim-proofs.js'
import { schemeOf } from './schemes.js'

// The defender of the bisection (player.ts): it commits to its tape of the
// step, then answers each query of the challenger from that tape.

export interface DefenderInit extends PlayerInit {
  /** the defender's committed per-step state roots (hex), to answer a bad opening; with `spacing` its proof's leaves */
  stateRoots: string[]
  /** a proof with a root every m > 1 steps (its diverged last step is disputed alone): `stateRoots` are its leaves, state s is leaf s / m */
  spacing?: ProofSpacing
  /** fault injection: answer the second bisection query with children that do not hash to their parent */
  lie?: boolean
  /** the canonical program bytes: a badOpen at step 0 carries them (the chain recomputes the initial state) */
  program?: Uint8Array
  /** in a segment dispute: the challenger's opening (seq 1) that named this step; the commit is message 2, linked to it */
  opening?: Signed
}

export class DefenderGame {
  readonly levels: Levels
  readonly depth: number
  private readonly tensors: TensorCache
  private answered = 0

  constructor (private readonly o: DefenderInit) {
    this.levels = treeLevels(o.entries.map(e => sha256(encodeEntryBytes(e))))
    this.depth = this.levels.length - 1
    this.tensors = new TensorCache(o.tensor)
  }

  private commitMsg?: Signed

  commit (): Signed {
    this.commitMsg ??= signAfter(this.o, { t: 'commit', d: this.o.disputeId, step: this.o.step, traceRoot: nodeAt(this.levels, 0, 0), depth: this.depth }, this.o.opening, 1)
    return this.commitMsg
  }

  /**
   * The next move after the challenger's message `m` (verified): it answers
   * `m` whatever came before, so the same query always gets the same answer
   * (off chain or forced on chain); a claim when the challenger broke the
   * rules provably.
   */
  respond (m: Msg, signed: Signed): { reply?: Signed, claim?: Claim } {
    const d = this.o.disputeId
    const after = { m, signed }
    // every message of this answer is linked after `m`
    this.sign = (body: Body) => signAfter(this.o, body, after.signed, after.m.seq)
    const refuse = (reason: string): { reply: Signed } => ({ reply: this.sign({ t: 'refuse', d, reason: reason.slice(0, 200) }) })
    if (m.d !== d) return refuse('another dispute')
    if (m.t === 'open') {
      const leaf = leafIndex(this.o.step, this.o.spacing)
      const mine = fromHex(this.o.stateRoots[leaf])
      // at step 0 the chain upholds a badOpen only if it can recompute state 0: if not, the opening is played like an agreed one
      const unprovable = m.step === this.o.step && this.o.step === 0 && !initialRootCheckable(this.o.program)
      if (!unprovable && (m.step !== this.o.step || !samePre(m.pre, mine))) {
        return { claim: { v: 1, kind: 'badOpen', open: signed, pre: mine, prePath: merkleProof(this.o.stateRoots.map(fromHex), leaf), ...(this.o.step === 0 && this.o.program !== undefined ? { program: this.o.program } : {}) } }
      }
      return { reply: this.nodes({ e: -1 }, 0, 0) }
    }
    if (m.t !== 'query') return refuse(`unexpected ${m.t}`)
    switch (m.want) {
      case 'children': return { reply: this.nodes(m.tree, m.level, m.index) }
      case 'entry': {
        if (m.tree.e !== -1 || m.level !== this.depth || m.index >= 2 ** this.depth) return refuse('entry query off the leaves')
        const e = this.o.entries[m.index]
        return { reply: this.sign(e === undefined ? { t: 'entry', d, index: m.index } : { t: 'entry', d, index: m.index, entry: encodeEntryBytes(e) }) }
      }
      case 'roots': {
        const t = m.tree as TensorTree
        if (t.e < 0 || this.o.entries[t.e] === undefined) return refuse('no such entry')
        const e = this.o.entries[t.e]
        const spec = t.io === 'in' ? e.inputs[t.k] : e.outputs[t.k]
        if (spec === undefined) return refuse('no such tensor')
        const x = this.o.tensor(t.e, t.io, t.k)
        const tree = { e: t.e, io: t.io, k: t.k }
        // a state conversion's chunked side (or the @state entry's chunked post-state) is opened by its chunk root
        const scheme = schemeOf(e, t.io, t.k)
        const chunked = scheme === 'chunked' ? commitChunked(x) : scheme === undefined ? chunkedIfSo(x, spec.commitment) : undefined
        if (chunked !== undefined) return { reply: this.sign({ t: 'chunks', d, tree, dtype: spec.dtype, shape: spec.shape, commitment: chunked.root, chunkRoot: chunked.chunkRoot }) }
        const c = commitTensor(x)
        return { reply: this.sign({ t: 'roots', d, tree, dtype: spec.dtype, shape: spec.shape, commitment: c.root, rowRoot: c.rowRoot, colRoot: c.colRoot }) }
      }
      case 'slice': {
        const t = m.tree as TensorTree
        if (t.e < 0 || t.axis === undefined || this.o.entries[t.e] === undefined) return refuse('bad slice query')
        const e = this.o.entries[t.e]
        if ((t.io === 'in' ? e.inputs[t.k] : e.outputs[t.k]) === undefined) return refuse('no such tensor')
        const { leaves, slices } = this.tensors.get({ ...t, axis: t.axis })
        if (m.index >= leaves) return refuse('slice index out of range')
        return { reply: this.sign({ t: 'slice', d, tree: t, index: m.index, bytes: slices(m.index) }) }
      }
    }
  }

  private sign: (body: Body) => Signed = () => { throw new Error('no message to answer') }

  private nodes (tree: TreeId, level: number, index: number): Signed {
    const d = this.o.disputeId
    let levels: Levels
    if (tree.e === -1) levels = this.levels
    else {
      const t = tree as TensorTree
      const e = this.o.entries[t.e]
      if (e === undefined || t.axis === undefined || (t.io === 'in' ? e.inputs[t.k] : e.outputs[t.k]) === undefined) return this.sign({ t: 'refuse', d, reason: 'no such tree' })
      levels = this.tensors.get({ ...t, axis: t.axis }).levels
    }
    const depth = levels.length - 1
    if (level >= depth || index >= 2 ** level) return this.sign({ t: 'refuse', d, reason: 'node off the tree' })
    const node = nodeAt(levels, level, index)
    const left = nodeAt(levels, level + 1, 2 * index)
    let right = nodeAt(levels, level + 1, 2 * index + 1)
    this.answered++
    if (this.o.lie === true && this.answered === 2) { right = right.slice(); right[0] ^= 0xff } // fault: lie-in-bisection
    return this.sign({ t: 'nodes', d, tree, level, index, depth, node, left, right })
  }
}

/** The chunked commitment of `x` if it is the one named (hex), else undefined. */
function chunkedIfSo (x: Parameters<typeof commitChunked>[0], named: string): ReturnType<typeof commitChunked> | undefined {
  const c = commitChunked(x)
  return toHex(c.root) === named ? c : undefined
}
