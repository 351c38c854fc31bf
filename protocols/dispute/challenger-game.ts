import { commitChunked } from '../commit/chunked.js'
import { ZERO_HASH, bytesEqual, fromHex, merkleProof, sha256 } from '../commit/merkle.js'
import { commitTensor } from '../commit/tensor.js'
import { MAX_ENTRY_BYTES, STATE_PSEUDO_KERNEL, type TapeEntry } from '../tape/tape.js'
import { ChallengerClaims, type Built, type Revealed } from './challenger-claims.js'
import type { ChallengerInit } from './challenger-init.js'
import type { Claim } from './claim.js'
import { decodeEntry } from './entry.js'
import { MAX_SLICE_BYTES, moveHash, type Body, type Msg, type Signed, type TensorAxis, type TensorTree, type TreeId } from './messages.js'
import { TensorCache, encodeEntryBytes, signAfter } from './player.js'
import { skeletonLeaf } from './skeleton.js'
import { factsOf, headerOf } from './facts.js'
import { leafHashOf, schemeOf } from './schemes.js'
import { childrenMatch, nodeAt, pathWith, treeLevels, type Levels } from './tree.js'

// The challenger of the bisection (player.ts): it descends the defender's
// tape tree to the first entry where the two tapes differ, then, if needed,
// the tree of the differing tensor to one element, and ends with the claim
// (challenger-claims.ts builds it) that the chain judges.

type AxisTree = TensorTree & { axis: TensorAxis }
const treeOf = (t: TensorTree, axis: TensorAxis): AxisTree => ({ e: t.e, io: t.io, k: t.k, axis })

/**
 * `demand`: the defender's first message is of no use but not provably a lie (a commit of another
 * step, a refusal): only the chain, which takes nothing but the commit of the disputed step, can
 * make it commit (the challenger's first force, both messages empty).
 */
export type ChallengerStep = { send: Signed } | { claim: Claim } | { fail: string } | { demand: string }

type Phase =
  | { p: 'await-commit' }
  | { p: 'descend', tree: TreeId | AxisTree, level: number, index: number, dNode: Uint8Array, from: Signed }
  | { p: 'entry', index: number, dLeaf: Uint8Array, from: Signed }
  | { p: 'roots', tree: TensorTree, entryMsg: Signed }
  | { p: 'slice', tree: AxisTree, index: number, dLeaf: Uint8Array, from: Signed }
  | { p: 'done' }

export class ChallengerGame {
  readonly levels: Levels
  readonly depth: number
  private readonly tensors: TensorCache
  private phase: Phase = { p: 'await-commit' }
  private readonly seen: Revealed = { tape: new Map(), tensor: new Map() }
  private readonly claims: ChallengerClaims
  private lastSent?: Signed
  /** the defender's message `lastSent` answers */
  private lastFrom?: { m: Msg, signed: Signed }
  private current?: { m: Msg, signed: Signed }
  /** moves: messages sent by the challenger */
  sent = 0

  constructor (private readonly o: ChallengerInit) {
    this.levels = treeLevels(o.entries.map(e => sha256(encodeEntryBytes(e))))
    this.depth = this.levels.length - 1
    this.tensors = new TensorCache(o.tensor)
    this.claims = new ChallengerClaims(o, this.levels, this.tensors, this.seen, this)
    if (o.segment !== undefined) {
      // our opening is already out: the defender's commit answers it
      this.lastSent = o.segment.opening
      this.lastFrom = o.segment.segment
      this.sent = 1
    }
  }

  private send (m: Body): ChallengerStep {
    const from = this.current!
    const s = signAfter(this.o, m, from.signed, from.m.seq)
    this.lastSent = s
    this.lastFrom = from
    this.sent++
    return { send: s }
  }

  /** Repeat the last query (the defender's answer was unusable but not provably a lie); on chain: force it. */
  repeat (): ChallengerStep { return this.lastSent !== undefined ? { send: this.lastSent } : { demand: 'the defender\'s commit, on chain' } }

  /** The pending move and the defender's message it answers: what a force posts on chain. */
  get pending (): { theirs: Signed, mine: Signed } | undefined {
    return this.lastSent !== undefined && this.lastFrom !== undefined ? { theirs: this.lastFrom.signed, mine: this.lastSent } : undefined
  }

  private lie (...msgs: Signed[]): ChallengerStep {
    this.phase = { p: 'done' }
    const all = this.seen.commit !== undefined && !msgs.includes(this.seen.commit) ? [this.seen.commit, ...msgs] : msgs
    return { claim: { v: 1, kind: 'lie', msgs: all.slice(0, 4) } }
  }

  private claim (c: Claim): ChallengerStep {
    this.phase = { p: 'done' }
    return { claim: this.o.segment === undefined ? c : { ...c, seg: this.o.segment.proof } }
  }

  /** Ends the game with a claim the claims built, or reports why there is none. */
  private end (b: Built): ChallengerStep { return 'claim' in b ? this.claim(b.claim) : b }

  private nanClaim (limit: number): ChallengerStep | undefined {
    const b = this.claims.nanClaim(limit)
    return b === undefined ? undefined : this.end(b)
  }

  private stateClaim (): ChallengerStep { return this.end(this.claims.stateClaim()) }

  private sliceClaim (tree: AxisTree, leaf: number, dBytes: Uint8Array): ChallengerStep {
    return this.end(tree.axis === 'chunk' ? this.claims.chunkClaim(tree, leaf, dBytes) : this.claims.sliceClaim({ ...tree, axis: tree.axis }, leaf, dBytes))
  }

  /** Feeds one message of the defender (signature already verified). */
  onMessage (m: Msg, signed: Signed): ChallengerStep {
    const d = this.o.disputeId
    if (m.d !== d) return this.repeat()
    // an answer must answer our last move (seq and hash): anything else is not part of this transcript
    if (this.lastSent !== undefined && (m.seq !== this.lastFrom!.m.seq + 2 || !bytesEqual(m.prev, moveHash(this.lastSent)))) return this.repeat()
    if (this.lastSent === undefined && m.seq !== 0) return this.repeat()
    if (m.t === 'segment') return this.repeat()
    this.current = { m, signed }
    const ph = this.phase
    // a refusal proves nothing: the move is forced on chain, where only a real answer is taken
    if (m.t === 'refuse') return this.repeat()
    switch (ph.p) {
      case 'await-commit': {
        // a commit of another step is no lie about this one: the chain takes only this step's (force_move, answer_move)
        if (m.t !== 'commit' || m.step !== this.o.step) return this.repeat()
        this.seen.commit = signed
        if (m.depth !== this.depth) return this.claim({ v: 1, kind: 'skeleton', commit: signed, index: 0, path: [], skelLeaf: this.o.skeleton[0] ?? ZERO_HASH, skelPath: merkleProof(this.o.skeleton, 0), ...this.claims.skeletonSize() })
        if (bytesEqual(m.traceRoot, nodeAt(this.levels, 0, 0))) {
          // the same computation: what can be wrong is a NaN the defender committed (or its divergence point)
          const n = this.nanClaim(this.o.entries.length)
          if (n !== undefined) return n
          if (this.o.divergence !== undefined) return { fail: 'the defender\'s tape of the diverged step equals ours' }
          return this.stateClaim()
        }
        this.phase = { p: 'descend', tree: { e: -1 }, level: 0, index: 0, dNode: m.traceRoot, from: signed }
        // in a segment dispute the opening came before the commit: ask for the tape root's children
        if (this.o.segment !== undefined) return this.send({ t: 'query', d, want: 'children', tree: { e: -1 }, level: 0, index: 0 })
        return this.send({ t: 'open', d, step: this.o.step, pre: this.claims.rootAt(this.o.step), post: this.o.postRoot })
      }
      case 'descend': {
        if (m.t !== 'nodes' || treeKeyOf(m.tree) !== treeKeyOf(ph.tree) || m.level !== ph.level || m.index !== ph.index) return this.repeat()
        if (!childrenMatch(m.node, m.left, m.right)) return this.lie(signed)
        if (!bytesEqual(m.node, ph.dNode)) return this.lie(ph.from, signed)
        const isTape = ph.tree.e === -1
        const levels = isTape ? this.levels : this.tensors.get(ph.tree as AxisTree).levels
        // the chain's continuation rule reads the depth an answer states: one other than the commit's (the roots') is a lie
        if (m.depth !== levels.length - 1) return isTape ? this.lie(signed) : this.lie(this.seen.roots!.msg, signed)
        // a zero node above rows, or bytes above padding, hides the rows from every claim: against the roots' header, a lie
        if (!isTape && factsOf([this.seen.roots!.body, m]).selfContradiction !== undefined) return this.lie(this.seen.roots!.msg, signed)
        const revealed = isTape ? this.seen.tape : this.seen.tensor
        const l = ph.level + 1
        revealed.set(`${l}:${2 * ph.index}`, m.left); revealed.set(`${l}:${2 * ph.index + 1}`, m.right)
        const leftDiffers = !bytesEqual(m.left, nodeAt(levels, l, 2 * ph.index))
        const rightDiffers = !bytesEqual(m.right, nodeAt(levels, l, 2 * ph.index + 1))
        if (!leftDiffers && !rightDiffers) return this.lie(signed) // cannot happen with consistent children
        const child = leftDiffers ? 2 * ph.index : 2 * ph.index + 1
        const dNode = leftDiffers ? m.left : m.right
        const depth = levels.length - 1
        if (l === depth) {
          if (isTape) {
            this.phase = { p: 'entry', index: child, dLeaf: dNode, from: signed }
            return this.send({ t: 'query', d, want: 'entry', tree: { e: -1 }, level: depth, index: child })
          }
          const t = ph.tree as AxisTree
          this.phase = { p: 'slice', tree: t, index: child, dLeaf: dNode, from: signed }
          return this.send({ t: 'query', d, want: 'slice', tree: t, level: depth, index: child })
        }
        this.phase = { p: 'descend', tree: ph.tree, level: l, index: child, dNode, from: signed }
        return this.send({ t: 'query', d, want: 'children', tree: ph.tree, level: l, index: child })
      }
      case 'entry': {
        // an answer longer than any entry fits in no claim: forced, only an entry of its size answers
        if (m.t !== 'entry' || m.index !== ph.index || (m.entry?.length ?? 0) > MAX_ENTRY_BYTES) return this.repeat()
        const leaf = m.entry === undefined ? ZERO_HASH : sha256(m.entry)
        if (!bytesEqual(leaf, ph.dLeaf)) return this.lie(ph.from, signed)
        const path = pathWith(this.levels, this.seen.tape, ph.index)
        const commit = this.seen.commit!
        const skelPath = merkleProof(padTo(this.o.skeleton, ph.index), ph.index)
        const skelLeaf = this.o.skeleton[ph.index] ?? ZERO_HASH
        if (m.entry === undefined) return this.claim({ v: 1, kind: 'skeleton', commit, index: ph.index, path, skelLeaf, skelPath, ...this.claims.skeletonSize() })
        const e = decodeEntry(m.entry)
        if (e === undefined || e.index !== ph.index || !bytesEqual(skeletonLeaf(e), skelLeaf)) return this.claim({ v: 1, kind: 'skeleton', commit, index: ph.index, entry: m.entry, path, skelLeaf, skelPath, ...this.claims.skeletonSize() })
        this.seen.entry = { index: ph.index, entry: e, bytes: m.entry, msg: signed }
        // entries before the first difference are ours: a NaN among them settles the dispute without the reference
        return this.nanClaim(ph.index) ?? this.analyseEntry(path)
      }
      case 'roots': {
        if ((m.t !== 'roots' && m.t !== 'chunks') || m.tree.e !== ph.tree.e || m.tree.io !== ph.tree.io || m.tree.k !== ph.tree.k) return this.repeat()
        const e = this.seen.entry!.entry
        const spec = ph.tree.io === 'in' ? e.inputs[ph.tree.k] : e.outputs[ph.tree.k]
        if (!bytesEqual(m.commitment, fromHex(spec.commitment))) return this.lie(ph.entryMsg, signed)
        // roots under another header than the entry's would open a commitment no claim under the entry's shape can
        if (!bytesEqual(headerOf(m.dtype, m.shape), headerOf(spec.dtype, spec.shape))) return this.lie(ph.entryMsg, signed)
        // an op tensor under a chunked commitment opens to no row or column (nor a conversion's chunked side to rows): the entry says which
        const scheme = schemeOf(e, ph.tree.io, ph.tree.k)
        if (scheme !== undefined && scheme !== (m.t === 'chunks' ? 'chunked' : 'rows')) return this.lie(ph.entryMsg, signed)
        // roots that do not combine to the commitment, a zero root of a tree with leaves (or a root with bytes of an empty one)
        if (factsOf([m]).selfContradiction !== undefined) return this.lie(signed)
        this.seen.roots = { msg: signed, body: m }
        this.seen.tensor = new Map()
        const mineT = this.o.tensor(ph.tree.e, ph.tree.io, ph.tree.k)
        let axis: TensorAxis | undefined
        if (m.t === 'chunks') axis = bytesEqual(m.chunkRoot, commitChunked(mineT).chunkRoot) ? undefined : 'chunk'
        else {
          const mine = commitTensor(mineT)
          axis = !bytesEqual(m.rowRoot, mine.rowRoot) ? 'row' : !bytesEqual(m.colRoot, mine.colRoot) ? 'col' : undefined
        }
        if (axis === undefined) return { fail: 'the defender tensor equals ours' }
        const tree = treeOf(ph.tree, axis)
        const levels = this.tensors.get(tree).levels
        const dNode = m.t === 'chunks' ? m.chunkRoot : axis === 'row' ? m.rowRoot : m.colRoot
        if (levels.length - 1 === 0) {
          this.phase = { p: 'slice', tree, index: 0, dLeaf: dNode, from: signed }
          return this.send({ t: 'query', d, want: 'slice', tree, level: 0, index: 0 })
        }
        this.phase = { p: 'descend', tree, level: 0, index: 0, dNode, from: signed }
        return this.send({ t: 'query', d, want: 'children', tree, level: 0, index: 0 })
      }
      case 'slice': {
        // likewise a slice longer than any leaf may be
        if (m.t !== 'slice' || m.index !== ph.index || treeKeyOf(m.tree) !== treeKeyOf(ph.tree) || m.bytes.length > MAX_SLICE_BYTES) return this.repeat()
        if (!bytesEqual(leafHashOf(ph.tree.axis, m.bytes), ph.dLeaf)) return this.lie(this.seen.roots!.msg, ph.from, signed)
        // a leaf of other bytes than its rows (columns) under the roots' header: no slice of it verifies in a claim
        if (factsOf([this.seen.roots!.body, m]).selfContradiction !== undefined) return this.lie(this.seen.roots!.msg, signed)
        return this.sliceClaim(ph.tree, ph.index, m.bytes)
      }
      default: return { fail: 'the game is over' }
    }
  }

  private analyseEntry (path: Uint8Array[]): ChallengerStep {
    const d = this.o.disputeId
    const { index, entry: de, bytes } = this.seen.entry!
    const mine = this.o.entries[index]
    const commit = this.seen.commit!
    for (let k = 0; k < de.inputs.length; k++) {
      const a = de.inputs[k]; const b = mine.inputs[k]
      if (a.commitment === b.commitment) continue
      if (a.ref.kind === 'state') {
        const t = a.ref.index
        return this.claim({ v: 1, kind: 'input', commit, index, entry: bytes, path, k, prov: { t, tensor: this.claims.headOf(index, k), tensorPath: merkleProof(this.o.preStateLeaves, t), pre: this.claims.rootAt(this.o.step), prePath: this.claims.pathAt(this.o.step) } })
      }
      if (a.ref.kind === 'op') {
        const j = a.ref.index
        return this.claim({ v: 1, kind: 'input', commit, index, entry: bytes, path, k, prov: { j: { index: j, entry: encodeEntryBytes(this.o.entries[j]), path: pathWith(this.levels, this.seen.tape, j) } } })
      }
      if (a.ref.kind === 'data') {
        const tree: TensorTree = { e: index, io: 'in', k }
        this.phase = { p: 'roots', tree, entryMsg: this.seen.entry!.msg }
        return this.send({ t: 'query', d, want: 'roots', tree, level: 0, index: 0 })
      }
    }
    if (de.kernel === STATE_PSEUDO_KERNEL) return this.stateClaim()
    for (let k = 0; k < de.outputs.length; k++) {
      if (de.outputs[k].commitment === mine.outputs[k].commitment) continue
      if (k !== 0) return { fail: `output ${k} of ${de.kernel} has no element reference` }
      const tree: TensorTree = { e: index, io: 'out', k }
      this.phase = { p: 'roots', tree, entryMsg: this.seen.entry!.msg }
      return this.send({ t: 'query', d, want: 'roots', tree, level: 0, index: 0 })
    }
    return { fail: `entry ${index} differs in no commitment we can dispute` }
  }

  /** Set by the caller: dataset row of batch position r (protocols/data batchIndices of this step). */
  batchRow: (r: number) => number = () => { throw new Error('batchRow not set') }
  /** Set by the caller: the operand list (elementOperands) of one output element. */
  operandRefs: (entry: TapeEntry, flat: number) => Array<{ input: number, axis: 'row' | 'col', index: number }> = () => { throw new Error('operandRefs not set') }

  /** True once a claim was produced or the game failed. */
  get done (): boolean { return this.phase.p === 'done' }
}

function treeKeyOf (t: TreeId): string { return t.e === -1 ? 'tape' : `${t.e}/${(t as TensorTree).io}/${(t as TensorTree).k}/${(t as TensorTree).axis ?? '-'}` }

function padTo (leaves: Uint8Array[], index: number): Uint8Array[] {
  if (index < leaves.length) return leaves
  return [...leaves, ...Array.from({ length: index + 1 - leaves.length }, () => ZERO_HASH)]
}
