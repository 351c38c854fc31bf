import { encode } from 'cborg'
import { ZERO_HASH, bytesEqual, leafHash, merkleProof, merkleRoot, sha256, toHex, fromHex } from '../commit/merkle.js'
import { axisLayout, combineRoots, commitTensor, dtypeBytes, matrixView, proveSlice, sizeOf, tensorLeafBytes, tensorLeaves, type SliceProof, type TensorData } from '../commit/tensor.js'
import { stepLeaf as stepLeafOf } from '../commit/state.js'
import { batchElement } from '../data/layout.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../tape/tape.js'
import type { Claim, ClaimSlice, SegmentProof, TensorHead } from './claim.js'
import { decodeEntry } from './entry.js'
import { moveHash, signMsg, type Body, type DisputeContext, type Msg, type Signed, type SignFn, type TensorTree, type TreeId } from './messages.js'
import { skeletonLeaf } from './skeleton.js'
import { childrenMatch, depthOf, nodeAt, pathWith, treeLevels, type Levels } from './tree.js'
import type { Divergence } from './nan.js'
import { isCommittedStep, leafOfStep } from '../pol/segments.js'

// The two players of the bisection, pure: each holds its own op tape of the
// disputed step (and the tensors of every entry) and turns the other side's
// message into its next message, or — for the challenger at the end — into
// the on-chain claim. Transport, signatures' verification, the chain clock
// and timeouts are the caller's (node/dispute).

export type TensorSource = (entry: number, io: 'in' | 'out', k: number) => TensorData

export interface PlayerInit {
  disputeId: number
  /** the chain's genesis hash and the task id: every signature is bound to them (messages.ts) */
  genesis: Uint8Array
  taskId: number
  /** on-chain step: the transition from state `step` to `step + 1` */
  step: number
  entries: TapeEntry[]
  tensor: TensorSource
  account: Uint8Array
  sign: SignFn
}

export function encodeEntryBytes (e: TapeEntry): Uint8Array { return encode(e) }

/** Signs `body` as the message after `after` (the other side's message it answers; none for the commit). */
export function signAfter (o: Pick<PlayerInit, 'genesis' | 'taskId' | 'disputeId' | 'account' | 'sign'>, body: Body, after: Signed | undefined, afterSeq: number): Signed {
  const link = after === undefined ? { seq: 0, prev: ZERO_HASH } : { seq: afterSeq + 1, prev: moveHash(after) }
  const ctx: DisputeContext = { genesis: o.genesis, taskId: o.taskId, disputeId: o.disputeId }
  return signMsg({ ...body, ...link } as Msg, o.account, o.sign, ctx)
}

const treeOf = (t: TensorTree, axis: 'row' | 'col'): TensorTree & { axis: 'row' | 'col' } => ({ e: t.e, io: t.io, k: t.k, axis })

// A tensor's row (column) tree: its leaves are groups of consecutive rows
// (columns), so bisection ends at a leaf and the slice answer carries the group.
class TensorCache {
  private readonly cache = new Map<string, { levels: Levels, slices: (leaf: number) => Uint8Array }>()
  constructor (private readonly tensor: TensorSource) {}
  get (t: TensorTree & { axis: 'row' | 'col' }): { levels: Levels, slices: (leaf: number) => Uint8Array } {
    const key = `${t.e}/${t.io}/${t.k}/${t.axis}`
    let v = this.cache.get(key)
    if (v === undefined) {
      const data = this.tensor(t.e, t.io, t.k)
      v = { levels: treeLevels(tensorLeaves(data, t.axis)), slices: (leaf: number) => tensorLeafBytes(data, t.axis, leaf) }
      this.cache.set(key, v)
    }
    return v
  }
}

/** The leaf that commits the state after `step`: the step itself, or step / m with a root every m steps (a committed state only). */
function leafIndex (step: number, spacing?: ProofSpacing): number {
  return spacing === undefined ? step : leafOfStep(step, spacing.steps, spacing.rootEvery)
}

/** A proof with a root every m > 1 steps: `stateRoots` are its ⌈steps / m⌉ + 1 leaves. */
export interface ProofSpacing { rootEvery: number, steps: number }

// ---------------------------------------------------------------- defender

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
    const refuse = (reason: string): { reply: Signed } => ({ reply: this.sign({ t: 'refuse', d, reason }) })
    if (m.d !== d) return refuse('another dispute')
    if (m.t === 'open') {
      const leaf = leafIndex(this.o.step, this.o.spacing)
      const mine = fromHex(this.o.stateRoots[leaf])
      if (m.step !== this.o.step || !bytesEqual(m.pre, mine)) {
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
        const c = commitTensor(this.o.tensor(t.e, t.io, t.k))
        return { reply: this.sign({ t: 'roots', d, tree: { e: t.e, io: t.io, k: t.k }, dtype: spec.dtype, shape: spec.shape, commitment: c.root, rowRoot: c.rowRoot, colRoot: c.colRoot }) }
      }
      case 'slice': {
        const t = m.tree as TensorTree
        if (t.e < 0 || t.axis === undefined || this.o.entries[t.e] === undefined) return refuse('bad slice query')
        const e = this.o.entries[t.e]
        if ((t.io === 'in' ? e.inputs[t.k] : e.outputs[t.k]) === undefined) return refuse('no such tensor')
        const { levels, slices } = this.tensors.get({ ...t, axis: t.axis })
        if (m.index >= levels[0].length) return refuse('slice index out of range')
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

// -------------------------------------------------------------- challenger

export interface ChallengerInit extends PlayerInit {
  defender: Uint8Array
  /** the defender's committed per-step state roots (hex, from its proof); with `spacing` its proof's leaves */
  stateRoots: string[]
  /** a proof with a root every m > 1 steps (its diverged last step is disputed alone): `stateRoots` are its leaves, state s is leaf s / m */
  spacing?: ProofSpacing
  /** leaves of the pre-state root: the challenger's state tensor commitments + step leaf */
  preStateLeaves: Uint8Array[]
  /** the challenger's own post-state root */
  postRoot: Uint8Array
  /** canonical program bytes (hash = program_hash) */
  program: Uint8Array
  /** skeleton leaves of the program (the challenger recomputes them from its own tape) */
  skeleton: Uint8Array[]
  dataset?: { xRoot: Uint8Array, yRoot: Uint8Array, row: (name: 'x' | 'y', index: number) => SliceProof }
  /** the first NaN in output 0 of our own tape of this step (entry, flat element), if any: an honest run commits none */
  firstNan?: Divergence
  /** a NaN in our pre-state ('pre', read by entry inputs) or post-state ('post', the @state entry) of this step: state tensor t, element flat */
  stateNan?: { which: 'pre' | 'post', t: number, flat: number }
  /** the proof's divergence point, when this is a diverged proof's last step */
  divergence?: Divergence
  /** a segment dispute, after our opening of this step (segment-game.ts): the roots come from the defender's signed segment */
  segment?: ChallengerSegment
}

/** What a segment dispute's challenger holds when it plays one step: the signed segment, its roots between the committed ends, and its own opening. */
export interface ChallengerSegment {
  /** the segment's first step c_j */
  first: number
  /** [leaf j, r_1 … r_{L−1}, leaf j+1] */
  roots: Uint8Array[]
  /** what every claim carries so the chain can rebuild `roots` */
  proof: SegmentProof
  /** the defender's segment message (seq 0) and our opening (seq 1) that answered it */
  segment: { m: Msg, signed: Signed }
  opening: Signed
}

export type ChallengerStep = { send: Signed } | { claim: Claim } | { fail: string }

type Phase =
  | { p: 'await-commit' }
  | { p: 'descend', tree: TreeId | (TensorTree & { axis: 'row' | 'col' }), level: number, index: number, dNode: Uint8Array, from: Signed }
  | { p: 'entry', index: number, dLeaf: Uint8Array, from: Signed }
  | { p: 'roots', tree: TensorTree, entryMsg: Signed }
  | { p: 'slice', tree: TensorTree & { axis: 'row' | 'col' }, index: number, dLeaf: Uint8Array, from: Signed }
  | { p: 'done' }

export class ChallengerGame {
  readonly levels: Levels
  readonly depth: number
  private readonly tensors: TensorCache
  private phase: Phase = { p: 'await-commit' }
  private commitSigned?: Signed
  private tapeRevealed = new Map<string, Uint8Array>()
  private tensorRevealed = new Map<string, Uint8Array>()
  private dEntry?: { index: number, entry: TapeEntry, bytes: Uint8Array, msg: Signed }
  private dRoots?: { rowRoot: Uint8Array, colRoot: Uint8Array, msg: Signed }
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
    if (o.segment !== undefined) {
      // our opening is already out: the defender's commit answers it
      this.lastSent = o.segment.opening
      this.lastFrom = o.segment.segment
      this.sent = 1
    }
  }

  /** The committed (or, inside a segment, the defender's signed) root of the state after step `index`. */
  private rootAt (index: number): Uint8Array {
    const s = this.o.segment
    return s === undefined ? fromHex(this.o.stateRoots[leafIndex(index, this.o.spacing)]) : s.roots[index - s.first]
  }

  /** Its path in proof_root (none inside a segment: the claim's `seg` proves it). */
  private pathAt (index: number): Uint8Array[] {
    return this.o.segment === undefined ? merkleProof(this.o.stateRoots.map(fromHex), leafIndex(index, this.o.spacing)) : []
  }

  /** The committed root of the state after step `index` as hex, if that state is committed. */
  private committedHex (index: number): string | undefined {
    const sp = this.o.spacing
    if (sp === undefined) return this.o.stateRoots[index]
    return isCommittedStep(index, sp.steps, sp.rootEvery) ? this.o.stateRoots[leafOfStep(index, sp.steps, sp.rootEvery)] : undefined
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
  repeat (): ChallengerStep { return this.lastSent !== undefined ? { send: this.lastSent } : { fail: 'nothing to repeat' } }

  /** The pending move and the defender's message it answers: what a force posts on chain. */
  get pending (): { theirs: Signed, mine: Signed } | undefined {
    return this.lastSent !== undefined && this.lastFrom !== undefined ? { theirs: this.lastFrom.signed, mine: this.lastSent } : undefined
  }

  private lie (...msgs: Signed[]): ChallengerStep {
    this.phase = { p: 'done' }
    const all = this.commitSigned !== undefined && !msgs.includes(this.commitSigned) ? [this.commitSigned, ...msgs] : msgs
    return { claim: { v: 1, kind: 'lie', msgs: all.slice(0, 4) } }
  }

  private claim (c: Claim): ChallengerStep {
    this.phase = { p: 'done' }
    return { claim: this.o.segment === undefined ? c : { ...c, seg: this.o.segment.proof } }
  }

  /** What opens the sized skeleton_root: the leaf count and the plain Merkle root under it. */
  private skeletonSize (): { skelCount: number, skelInner: Uint8Array } {
    return { skelCount: this.o.skeleton.length, skelInner: merkleRoot(this.o.skeleton) }
  }

  /** The preimage of input k of entry `index` in our tape: the agreed pre-state tensor it reads. */
  private headOf (index: number, k: number): TensorHead {
    const t = this.o.tensor(index, 'in', k)
    const c = commitTensor(t)
    return { dtype: t.dtype, shape: t.shape, rowRoot: c.rowRoot, colRoot: c.colRoot }
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
    if (m.t === 'refuse') return ph.p === 'await-commit' ? { fail: `defender refused: ${m.reason}` } : this.repeat()
    switch (ph.p) {
      case 'await-commit': {
        if (m.t !== 'commit' || m.step !== this.o.step) return { fail: 'expected the tape commitment' }
        this.commitSigned = signed
        if (m.depth !== this.depth) return this.claim({ v: 1, kind: 'skeleton', commit: signed, index: 0, path: [], skelLeaf: this.o.skeleton[0] ?? ZERO_HASH, skelPath: merkleProof(this.o.skeleton, 0), ...this.skeletonSize() })
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
        return this.send({ t: 'open', d, step: this.o.step, pre: this.rootAt(this.o.step), post: this.o.postRoot })
      }
      case 'descend': {
        if (m.t !== 'nodes' || treeKeyOf(m.tree) !== treeKeyOf(ph.tree) || m.level !== ph.level || m.index !== ph.index) return this.repeat()
        if (!childrenMatch(m.node, m.left, m.right)) return this.lie(signed)
        if (!bytesEqual(m.node, ph.dNode)) return this.lie(ph.from, signed)
        const isTape = ph.tree.e === -1
        const levels = isTape ? this.levels : this.tensors.get(ph.tree as TensorTree & { axis: 'row' | 'col' }).levels
        const revealed = isTape ? this.tapeRevealed : this.tensorRevealed
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
          const t = ph.tree as TensorTree & { axis: 'row' | 'col' }
          this.phase = { p: 'slice', tree: t, index: child, dLeaf: dNode, from: signed }
          return this.send({ t: 'query', d, want: 'slice', tree: t, level: depth, index: child })
        }
        this.phase = { p: 'descend', tree: ph.tree, level: l, index: child, dNode, from: signed }
        return this.send({ t: 'query', d, want: 'children', tree: ph.tree, level: l, index: child })
      }
      case 'entry': {
        if (m.t !== 'entry' || m.index !== ph.index) return this.repeat()
        const leaf = m.entry === undefined ? ZERO_HASH : sha256(m.entry)
        if (!bytesEqual(leaf, ph.dLeaf)) return this.lie(ph.from, signed)
        const path = pathWith(this.levels, this.tapeRevealed, ph.index)
        const commit = this.commitSigned!
        const skelPath = merkleProof(padTo(this.o.skeleton, ph.index), ph.index)
        const skelLeaf = this.o.skeleton[ph.index] ?? ZERO_HASH
        if (m.entry === undefined) return this.claim({ v: 1, kind: 'skeleton', commit, index: ph.index, path, skelLeaf, skelPath, ...this.skeletonSize() })
        const e = decodeEntry(m.entry)
        if (e === undefined || e.index !== ph.index || !bytesEqual(skeletonLeaf(e), skelLeaf)) return this.claim({ v: 1, kind: 'skeleton', commit, index: ph.index, entry: m.entry, path, skelLeaf, skelPath, ...this.skeletonSize() })
        this.dEntry = { index: ph.index, entry: e, bytes: m.entry, msg: signed }
        // entries before the first difference are ours: a NaN among them settles the dispute without the reference
        return this.nanClaim(ph.index) ?? this.analyseEntry(path)
      }
      case 'roots': {
        if (m.t !== 'roots' || m.tree.e !== ph.tree.e || m.tree.io !== ph.tree.io || m.tree.k !== ph.tree.k) return this.repeat()
        const e = this.dEntry!.entry
        const spec = ph.tree.io === 'in' ? e.inputs[ph.tree.k] : e.outputs[ph.tree.k]
        if (!bytesEqual(m.commitment, fromHex(spec.commitment))) return this.lie(ph.entryMsg, signed)
        const mine = commitTensor(this.o.tensor(ph.tree.e, ph.tree.io, ph.tree.k))
        if (!bytesEqual(m.commitment, rootsCombined(m))) return this.lie(signed)
        this.dRoots = { rowRoot: m.rowRoot, colRoot: m.colRoot, msg: signed }
        const axis: 'row' | 'col' | undefined = !bytesEqual(m.rowRoot, mine.rowRoot) ? 'row' : !bytesEqual(m.colRoot, mine.colRoot) ? 'col' : undefined
        if (axis === undefined) return { fail: 'the defender tensor equals ours' }
        const tree = treeOf(ph.tree, axis)
        this.tensorRevealed = new Map()
        const levels = this.tensors.get(tree).levels
        const dNode = axis === 'row' ? m.rowRoot : m.colRoot
        if (levels.length - 1 === 0) {
          this.phase = { p: 'slice', tree, index: 0, dLeaf: dNode, from: signed }
          return this.send({ t: 'query', d, want: 'slice', tree, level: 0, index: 0 })
        }
        this.phase = { p: 'descend', tree, level: 0, index: 0, dNode, from: signed }
        return this.send({ t: 'query', d, want: 'children', tree, level: 0, index: 0 })
      }
      case 'slice': {
        if (m.t !== 'slice' || m.index !== ph.index || treeKeyOf(m.tree) !== treeKeyOf(ph.tree)) return this.repeat()
        void 0
        if (!bytesEqual(leafHash(m.bytes), ph.dLeaf)) return this.lie(this.dRoots!.msg, ph.from, signed)
        return this.sliceClaim(ph.tree, ph.index, m.bytes)
      }
      default: return { fail: 'the game is over' }
    }
  }

  /**
   * A claim on a NaN the defender committed among entries < `limit` (which
   * agree with ours), or on a divergence point that is not where our run
   * diverges; undefined if there is none.
   */
  private nanClaim (limit: number): ChallengerStep | undefined {
    const n = this.o.firstNan
    const v = this.o.divergence
    const before = (a: Divergence, b: Divergence): boolean => a.entry < b.entry || (a.entry === b.entry && a.flat < b.flat)
    const sn = this.o.stateNan
    // a post-state NaN is provable only against a committed post-state root equal to ours (there is none on a diverged step)
    if (sn !== undefined && (sn.which === 'pre' || (v === undefined && (this.o.segment === undefined ? this.committedHex(this.o.step + 1) === toHex(this.o.postRoot) : bytesEqual(this.rootAt(this.o.step + 1), this.o.postRoot))))) return this.stateNanClaim(sn)
    if (n !== undefined && n.entry < limit && (v === undefined || before(n, v))) return this.opNanClaim(n)
    if (v !== undefined && v.entry < limit && (n === undefined || before(v, n))) {
      // our output holds no NaN there: an element claim shows the defender's (= ours) does not either
      const operands = this.operandsFor(v.entry, v.flat)
      if (typeof operands === 'string') return { fail: operands }
      const e = this.o.entries[v.entry]
      const out = this.o.tensor(v.entry, 'out', 0)
      const { cols } = matrixView(out.shape)
      return this.claim({ v: 1, kind: 'element', commit: this.commitSigned!, index: v.entry, entry: encodeEntryBytes(e), path: pathWith(this.levels, this.tapeRevealed, v.entry), program: this.o.program, flat: v.flat, slice: proveSlice(out, 'row', Math.floor(v.flat / cols)), operands })
    }
    return undefined
  }

  private opNanClaim (n: Divergence): ChallengerStep {
    const out = this.o.tensor(n.entry, 'out', 0)
    const { cols } = matrixView(out.shape)
    return this.claim({ v: 1, kind: 'nan', flat: n.flat, slice: proveSlice(out, 'row', Math.floor(n.flat / cols)), op: { commit: this.commitSigned!, index: n.entry, entry: encodeEntryBytes(this.o.entries[n.entry]), path: pathWith(this.levels, this.tapeRevealed, n.entry) } })
  }

  private stateNanClaim (s: { which: 'pre' | 'post', t: number, flat: number }): ChallengerStep {
    const last = this.o.entries.length - 1
    let tensor: TensorData | undefined
    if (s.which === 'post') tensor = this.o.tensor(last, 'in', s.t)
    else {
      for (let i = 0; i < last && tensor === undefined; i++) {
        const k = this.o.entries[i].inputs.findIndex(x => x.ref.kind === 'state' && x.ref.index === s.t)
        if (k >= 0) tensor = this.o.tensor(i, 'in', k)
      }
    }
    if (tensor === undefined) return { fail: `no entry reads state tensor ${s.t}` }
    const index = this.o.step + (s.which === 'post' ? 1 : 0)
    const leaves = s.which === 'pre' ? this.o.preStateLeaves : [...this.o.entries[last].inputs.map(x => fromHex(x.commitment)), stepLeafOf(index)]
    const c = commitTensor(tensor)
    const { cols } = matrixView(tensor.shape)
    return this.claim({
      v: 1, kind: 'nan', flat: s.flat, slice: proveSlice(tensor, 'row', Math.floor(s.flat / cols)),
      state: {
        index, root: this.rootAt(index), rootPath: this.pathAt(index),
        t: s.t, tensor: { dtype: tensor.dtype, shape: [...tensor.shape], rowRoot: c.rowRoot, colRoot: c.colRoot },
        tensorPath: merkleProof(leaves, s.t)
      }
    })
  }

  private stateClaim (): ChallengerStep {
    const i = this.o.entries.length - 1
    const e = this.o.entries[i]
    if (e.kernel !== STATE_PSEUDO_KERNEL) return { fail: 'our tape has no @state entry' }
    const tape = { v: 1 as const, kind: 'state' as const, commit: this.commitSigned!, index: i, entry: encodeEntryBytes(e), path: pathWith(this.levels, this.tapeRevealed, i) }
    // a segmented proof's diverged step has no committed post-state (the chain rules on that before any path)
    const uncommitted = this.o.spacing !== undefined && this.o.segment === undefined && this.committedHex(this.o.step + 1) === undefined
    if (uncommitted) return this.claim({ ...tape, post: this.o.postRoot, postPath: [] })
    return this.claim({ ...tape, post: this.rootAt(this.o.step + 1), postPath: this.pathAt(this.o.step + 1) })
  }

  private analyseEntry (path: Uint8Array[]): ChallengerStep {
    const d = this.o.disputeId
    const { index, entry: de, bytes } = this.dEntry!
    const mine = this.o.entries[index]
    const commit = this.commitSigned!
    for (let k = 0; k < de.inputs.length; k++) {
      const a = de.inputs[k]; const b = mine.inputs[k]
      if (a.commitment === b.commitment) continue
      if (a.ref.kind === 'state') {
        const t = a.ref.index
        return this.claim({ v: 1, kind: 'input', commit, index, entry: bytes, path, k, prov: { t, tensor: this.headOf(index, k), tensorPath: merkleProof(this.o.preStateLeaves, t), pre: this.rootAt(this.o.step), prePath: this.pathAt(this.o.step) } })
      }
      if (a.ref.kind === 'op') {
        const j = a.ref.index
        return this.claim({ v: 1, kind: 'input', commit, index, entry: bytes, path, k, prov: { j: { index: j, entry: encodeEntryBytes(this.o.entries[j]), path: pathWith(this.levels, this.tapeRevealed, j) } } })
      }
      if (a.ref.kind === 'data') {
        const tree: TensorTree = { e: index, io: 'in', k }
        this.phase = { p: 'roots', tree, entryMsg: this.dEntry!.msg }
        return this.send({ t: 'query', d, want: 'roots', tree, level: 0, index: 0 })
      }
    }
    if (de.kernel === STATE_PSEUDO_KERNEL) return this.stateClaim()
    for (let k = 0; k < de.outputs.length; k++) {
      if (de.outputs[k].commitment === mine.outputs[k].commitment) continue
      if (k !== 0) return { fail: `output ${k} of ${de.kernel} has no element reference` }
      const tree: TensorTree = { e: index, io: 'out', k }
      this.phase = { p: 'roots', tree, entryMsg: this.dEntry!.msg }
      return this.send({ t: 'query', d, want: 'roots', tree, level: 0, index: 0 })
    }
    return { fail: `entry ${index} differs in no commitment we can dispute` }
  }

  /** `leaf`: the differing leaf of the tensor tree; `dBytes`: the defender's bytes of it (a group of rows or columns). */
  private sliceClaim (tree: TensorTree & { axis: 'row' | 'col' }, leaf: number, dBytes: Uint8Array): ChallengerStep {
    const { index: ei, entry: de, bytes: entryBytes } = this.dEntry!
    const mineT = this.o.tensor(tree.e, tree.io, tree.k)
    const { cols } = matrixView(mineT.shape)
    const eb = dtypeBytes(mineT.dtype)
    const layout = axisLayout(mineT.dtype, mineT.shape, tree.axis)
    const mineBytes = this.tensors.get(tree).slices(leaf)
    let pos = -1
    for (let p = 0; p * eb < mineBytes.length; p++) {
      if (!bytesEqual(mineBytes.subarray(p * eb, (p + 1) * eb), dBytes.subarray(p * eb, (p + 1) * eb))) { pos = p; break }
    }
    if (pos < 0 || dBytes.length !== mineBytes.length) {
      if (dBytes.length !== mineBytes.length) pos = 0
      else return { fail: 'the defender slice equals ours' }
    }
    // element `pos` of the group: row (column) `index`, element `at` of it
    const perSlice = Math.max(1, layout.sliceBytes / eb)
    const index = leaf * layout.group + Math.floor(pos / perSlice)
    const at = pos % perSlice
    const flat = tree.axis === 'row' ? index * cols + at : at * cols + index
    const levels = this.tensors.get(tree).levels
    const slice: ClaimSlice = {
      dtype: mineT.dtype, shape: [...mineT.shape], axis: tree.axis, index, bytes: dBytes,
      siblings: pathWith(levels, this.tensorRevealed, leaf),
      otherRoot: tree.axis === 'row' ? this.dRoots!.colRoot : this.dRoots!.rowRoot
    }
    const commit = this.commitSigned!
    const path = pathWith(this.levels, this.tapeRevealed, ei)
    if (tree.io === 'in') {
      const name = (de.inputs[tree.k].ref as { name: 'x' | 'y' }).name
      if (this.o.dataset === undefined) return { fail: 'no dataset to prove a batch row' }
      // one dataset row per example, whatever the batch's shape ([b,784] or [b,28,28,1])
      const { r } = batchElement(flat, sizeOf(mineT.shape) / mineT.shape[0])
      return this.claim({ v: 1, kind: 'data', commit, index: ei, entry: entryBytes, path, program: this.o.program, k: tree.k, flat, slice, row: this.o.dataset.row(name, this.batchRow(r)), xRoot: this.o.dataset.xRoot, yRoot: this.o.dataset.yRoot })
    }
    const operands = this.operandsFor(ei, flat)
    if (typeof operands === 'string') return { fail: operands }
    return this.claim({ v: 1, kind: 'element', commit, index: ei, entry: entryBytes, path, program: this.o.program, flat, slice, operands })
  }

  /** Set by the caller: dataset row of batch position r (protocols/data batchIndices of this step). */
  batchRow: (r: number) => number = () => { throw new Error('batchRow not set') }
  /** Set by the caller: the operand list (elementOperands) of one output element. */
  operandRefs: (entry: TapeEntry, flat: number) => Array<{ input: number, axis: 'row' | 'col', index: number }> = () => { throw new Error('operandRefs not set') }

  private operandsFor (ei: number, flat: number): ClaimSlice[] | string {
    const e = this.o.entries[ei]
    let refs
    try { refs = this.operandRefs(e, flat) } catch (err) { return `no element reference for ${e.kernel}: ${(err as Error).message}` }
    return refs.map(r => proveSlice(this.o.tensor(ei, 'in', r.input), r.axis, r.index))
  }

  /** True once a claim was produced or the game failed. */
  get done (): boolean { return this.phase.p === 'done' }
}

function rootsCombined (m: Extract<Msg, { t: 'roots' }>): Uint8Array {
  try { return combineRoots(m.dtype, m.shape, m.rowRoot, m.colRoot) } catch { return ZERO_HASH }
}

function treeKeyOf (t: TreeId): string { return t.e === -1 ? 'tape' : `${t.e}/${(t as TensorTree).io}/${(t as TensorTree).k}/${(t as TensorTree).axis ?? '-'}` }

function padTo (leaves: Uint8Array[], index: number): Uint8Array[] {
  if (index < leaves.length) return leaves
  return [...leaves, ...Array.from({ length: index + 1 - leaves.length }, () => ZERO_HASH)]
}

export { depthOf, toHex }
