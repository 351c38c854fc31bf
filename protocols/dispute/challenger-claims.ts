import { proveElementChunk } from '../commit/chunked.js'
import { bytesEqual, fromHex, merkleProof, merkleRoot, toHex } from '../commit/merkle.js'
import { stepLeaf as stepLeafOf } from '../commit/state.js'
import { axisLayout, commitTensor, dtypeBytes, matrixView, proveSlice, sizeOf, type TensorData } from '../commit/tensor.js'
import { batchElement } from '../data/layout.js'
import { isCommittedStep, leafOfStep } from '../pol/segments.js'
import { STATE_READ_KERNEL, STATE_WRITE_KERNEL, isStateConversion } from '../tape/state-io.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../tape/tape.js'
import type { ChallengerInit } from './challenger-init.js'
import { chunkedHeadIf, firstDifference, ownParts, readParts, writeParts, type ConvertParts } from './challenger-convert.js'
import type { ChunkedHead, Claim, ClaimSlice, TensorHead } from './claim.js'
import type { Msg, Signed, TensorTree } from './messages.js'
import { bogusPoint, type Divergence } from './nan.js'
import { encodeEntryBytes, leafIndex, type TensorCache } from './player.js'
import { isForcedLeafOf } from './forced-leaf.js'
import { pathWith, type Levels } from './tree.js'

// The challenger's claims (claim.ts): each proves one fact about the
// defender's signed tape with what the defender revealed in the game and the
// challenger's own run of the step. The game (challenger-game.ts) decides
// which claim to make; this builds it.

/** What the defender revealed so far: the claims prove their facts with it. */
export interface Revealed {
  /** the defender's signed tape commitment */
  commit?: Signed
  /** the defender's tape tree nodes it answered with, by `level:index` */
  tape: Map<string, Uint8Array>
  /** the same, of the tensor tree being bisected */
  tensor: Map<string, Uint8Array>
  /** the first entry where the two tapes differ, as the defender signed it */
  entry?: { index: number, entry: TapeEntry, bytes: Uint8Array, msg: Signed }
  /** the defender's roots (or chunk root) of its differing tensor */
  roots?: { msg: Signed, body: Extract<Msg, { t: 'roots' | 'chunks' }> }
}

/** Set by the game's caller on the game (ChallengerGame.batchRow, .operandRefs): what a data or element claim needs of the program. */
export interface ElementHooks {
  /** dataset row of batch position r (protocols/data batchIndices of this step) */
  batchRow: (r: number) => number
  /** the operand list (elementOperands) of one output element */
  operandRefs: (entry: TapeEntry, flat: number) => Array<{ input: number, axis: 'row' | 'col', index: number }>
}

/** A claim, or why none can be made. */
export type Built = { claim: Claim } | { fail: string }

export class ChallengerClaims {
  constructor (
    private readonly o: ChallengerInit,
    private readonly levels: Levels,
    private readonly tensors: TensorCache,
    private readonly seen: Revealed,
    private readonly hooks: ElementHooks
  ) {}

  private claim (c: Claim): Built { return { claim: c } }

  /**
   * The committed (or, inside a segment, the defender's signed) root of the
   * state after step `index`; our own pre-state root when the committed
   * pre-state leaf is a forced error's mark of it (the chain takes the
   * preimage for a marked pre-state: forced-leaf.ts).
   */
  rootAt (index: number): Uint8Array {
    const s = this.o.segment
    if (s !== undefined) return s.roots[index - s.first]
    const r = fromHex(this.o.stateRoots[leafIndex(index, this.o.spacing)])
    if (index === this.o.step) {
      const ours = merkleRoot(this.o.preStateLeaves)
      if (isForcedLeafOf(r, ours)) return ours
    }
    return r
  }

  /** Its path in proof_root (none inside a segment: the claim's `seg` proves it). */
  pathAt (index: number): Uint8Array[] {
    return this.o.segment === undefined ? merkleProof(this.o.stateRoots.map(fromHex), leafIndex(index, this.o.spacing)) : []
  }

  /** The committed root of the state after step `index` as hex, if that state is committed. */
  private committedHex (index: number): string | undefined {
    const sp = this.o.spacing
    if (sp === undefined) return this.o.stateRoots[index]
    return isCommittedStep(index, sp.steps, sp.rootEvery) ? this.o.stateRoots[leafOfStep(index, sp.steps, sp.rootEvery)] : undefined
  }

  /** What opens the sized skeleton_root: the leaf count and the plain Merkle root under it. */
  skeletonSize (): { skelCount: number, skelInner: Uint8Array } {
    return { skelCount: this.o.skeleton.length, skelInner: merkleRoot(this.o.skeleton) }
  }

  /** The preimage of input k of entry `index` in our tape: the agreed pre-state tensor it reads (chunked under chunked state roots). */
  headOf (index: number, k: number): TensorHead | ChunkedHead {
    const t = this.o.tensor(index, 'in', k)
    const e = this.o.entries[index]
    if (e.kernel === STATE_READ_KERNEL || e.kernel === STATE_PSEUDO_KERNEL) {
      const chunked = chunkedHeadIf(t, fromHex(e.inputs[k].commitment))
      if (chunked !== undefined) return chunked
    }
    const c = commitTensor(t)
    return { dtype: t.dtype, shape: t.shape, rowRoot: c.rowRoot, colRoot: c.colRoot }
  }

  /** The convert claim on entry `index` (of the defender's tape, as revealed) with its element and openings. */
  private convertClaim (index: number, entry: Uint8Array, p: ConvertParts): Built {
    return this.claim({ v: 1, kind: 'convert', commit: this.seen.commit!, index, entry, path: pathWith(this.levels, this.seen.tape, index), ...p })
  }

  /**
   * A claim on a NaN the defender committed among entries < `limit` (which
   * agree with ours), or on a divergence point that is not where our run
   * diverges; undefined if there is none.
   */
  nanClaim (limit: number): Built | undefined {
    const n = this.o.firstNan
    const v = this.o.divergence
    const before = (a: Divergence, b: Divergence): boolean => a.entry < b.entry || (a.entry === b.entry && a.flat < b.flat)
    const sn = this.o.stateNan
    // a post-state NaN is provable only against a committed post-state root equal to ours (there is none on a diverged step)
    if (sn !== undefined && (sn.which === 'pre' || (v === undefined && (this.o.segment === undefined ? this.committedHex(this.o.step + 1) === toHex(this.o.postRoot) : bytesEqual(this.rootAt(this.o.step + 1), this.o.postRoot))))) return this.stateNanClaim(sn)
    if (n !== undefined && n.entry < limit && (v === undefined || before(n, v))) return this.opNanClaim(n)
    if (v !== undefined && (n === undefined || before(v, n))) {
      // a point at or past the @state entry: the tapes agree up to it, and the step completed
      const last = this.o.entries.length - 1
      if (v.entry >= last && limit > last) return this.stateClaim()
      if (v.entry >= limit) return undefined
      // our output holds no NaN there: an element claim shows the defender's (= ours) does not either;
      // a point naming no float32 element of the output loses on any element of it (bogusPoint)
      const e = this.o.entries[v.entry]
      const flat = bogusPoint(e.outputs[0], v.flat) === undefined ? v.flat : 0
      // a conversion makes no NaN: the chain rules on the point's position, our openings are what it takes
      if (isStateConversion(e.kernel)) {
        const p = ownParts(e, this.o.tensor(v.entry, 'in', 0), this.o.tensor(v.entry, 'out', 0), flat)
        return typeof p === 'string' ? { fail: p } : this.convertClaim(v.entry, encodeEntryBytes(e), p)
      }
      const operands = this.operandsFor(v.entry, flat)
      if (typeof operands === 'string') return { fail: operands }
      const out = this.o.tensor(v.entry, 'out', 0)
      const { cols } = matrixView(out.shape)
      return this.claim({ v: 1, kind: 'element', commit: this.seen.commit!, index: v.entry, entry: encodeEntryBytes(e), path: pathWith(this.levels, this.seen.tape, v.entry), program: this.o.program, flat, slice: proveSlice(out, 'row', Math.floor(flat / cols)), operands })
    }
    return undefined
  }

  private opNanClaim (n: Divergence): Built {
    const out = this.o.tensor(n.entry, 'out', 0)
    const { cols } = matrixView(out.shape)
    return this.claim({ v: 1, kind: 'nan', flat: n.flat, slice: proveSlice(out, 'row', Math.floor(n.flat / cols)), op: { commit: this.seen.commit!, index: n.entry, entry: encodeEntryBytes(this.o.entries[n.entry]), path: pathWith(this.levels, this.seen.tape, n.entry) } })
  }

  private stateNanClaim (s: { which: 'pre' | 'post', t: number, flat: number }): Built {
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
    const state = { index, root: this.rootAt(index), rootPath: this.pathAt(index), t: s.t, tensorPath: merkleProof(leaves, s.t) }
    // under chunked state roots the state tensor is a chunked commitment: its element is read from its chunk
    const chunked = leaves[s.t] === undefined ? undefined : chunkedHeadIf(tensor, leaves[s.t])
    if (chunked !== undefined) return this.claim({ v: 1, kind: 'nan', flat: s.flat, chunk: proveElementChunk(tensor, s.flat), state: { ...state, tensor: chunked } })
    const c = commitTensor(tensor)
    const { cols } = matrixView(tensor.shape)
    return this.claim({
      v: 1, kind: 'nan', flat: s.flat, slice: proveSlice(tensor, 'row', Math.floor(s.flat / cols)),
      state: { ...state, tensor: { dtype: tensor.dtype, shape: [...tensor.shape], rowRoot: c.rowRoot, colRoot: c.colRoot } }
    })
  }

  stateClaim (): Built {
    const i = this.o.entries.length - 1
    const e = this.o.entries[i]
    if (e.kernel !== STATE_PSEUDO_KERNEL) return { fail: 'our tape has no @state entry' }
    const tape = { v: 1 as const, kind: 'state' as const, commit: this.seen.commit!, index: i, entry: encodeEntryBytes(e), path: pathWith(this.levels, this.seen.tape, i) }
    // a segmented proof's diverged step has no committed post-state (the chain rules on that before any path)
    const uncommitted = this.o.spacing !== undefined && this.o.segment === undefined && this.committedHex(this.o.step + 1) === undefined
    if (uncommitted) return this.claim({ ...tape, post: this.o.postRoot, postPath: [] })
    return this.claim({ ...tape, post: this.rootAt(this.o.step + 1), postPath: this.pathAt(this.o.step + 1) })
  }

  /** `leaf`: the differing leaf of the tensor tree; `dBytes`: the defender's bytes of it (a group of rows or columns). */
  sliceClaim (tree: TensorTree & { axis: 'row' | 'col' }, leaf: number, dBytes: Uint8Array): Built {
    const { index: ei, entry: de, bytes: entryBytes } = this.seen.entry!
    const mineT = this.o.tensor(tree.e, tree.io, tree.k)
    const { cols } = matrixView(mineT.shape)
    const eb = dtypeBytes(mineT.dtype)
    const layout = axisLayout(mineT.dtype, mineT.shape, tree.axis)
    const mineBytes = this.tensors.get(tree).slices(leaf)
    const pos = firstDifference(eb, mineBytes, dBytes)
    if (pos < 0) return { fail: 'the defender slice equals ours' }
    // element `pos` of the group: row (column) `index`, element `at` of it
    const perSlice = Math.max(1, layout.sliceBytes / eb)
    const index = leaf * layout.group + Math.floor(pos / perSlice)
    const at = pos % perSlice
    const flat = tree.axis === 'row' ? index * cols + at : at * cols + index
    const levels = this.tensors.get(tree).levels
    const roots = this.seen.roots!.body
    if (roots.t !== 'roots') return { fail: 'a row or column walk without the defender\'s roots' }
    const slice: ClaimSlice = {
      dtype: mineT.dtype, shape: [...mineT.shape], axis: tree.axis, index, bytes: dBytes,
      siblings: pathWith(levels, this.seen.tensor, leaf),
      otherRoot: tree.axis === 'row' ? roots.colRoot : roots.rowRoot
    }
    // a @StateRead's row + column output against our chunk of the agreed state it reads
    if (de.kernel === STATE_READ_KERNEL && tree.io === 'out') return this.convertClaim(ei, entryBytes, readParts(this.o.tensor(ei, 'in', 0), flat, slice))
    const commit = this.seen.commit!
    const path = pathWith(this.levels, this.seen.tape, ei)
    if (tree.io === 'in') {
      const name = (de.inputs[tree.k].ref as { name: 'x' | 'y' }).name
      if (this.o.dataset === undefined) return { fail: 'no dataset to prove a batch row' }
      // one dataset row per example, whatever the batch's shape ([b,784] or [b,28,28,1])
      const { r } = batchElement(flat, sizeOf(mineT.shape) / mineT.shape[0])
      return this.claim({ v: 1, kind: 'data', commit, index: ei, entry: entryBytes, path, program: this.o.program, k: tree.k, flat, slice, row: this.o.dataset.row(name, this.hooks.batchRow(r)), xRoot: this.o.dataset.xRoot, yRoot: this.o.dataset.yRoot })
    }
    const operands = this.operandsFor(ei, flat)
    if (typeof operands === 'string') return { fail: operands }
    return this.claim({ v: 1, kind: 'element', commit, index: ei, entry: entryBytes, path, program: this.o.program, flat, slice, operands })
  }

  /** `leaf`: the differing chunk of a @StateWrite's chunked output; `dBytes`: the defender's chunk. */
  chunkClaim (tree: TensorTree, leaf: number, dBytes: Uint8Array): Built {
    const { index: ei, entry: de, bytes: entryBytes } = this.seen.entry!
    if (de.kernel !== STATE_WRITE_KERNEL || tree.io !== 'out' || tree.k !== 0) return { fail: `entry ${ei} (${de.kernel}) has no chunked output` }
    const t = { ...tree, axis: 'chunk' as const }
    const mine = this.tensors.get(t)
    const p = writeParts(this.o.tensor(ei, 'in', 0), leaf, mine.slices(leaf), dBytes, pathWith(mine.levels, this.seen.tensor, leaf))
    return p === undefined ? { fail: 'the defender chunk equals ours' } : this.convertClaim(ei, entryBytes, p)
  }

  private operandsFor (ei: number, flat: number): ClaimSlice[] | string {
    const e = this.o.entries[ei]
    let refs
    try { refs = this.hooks.operandRefs(e, flat) } catch (err) { return `no element reference for ${e.kernel}: ${(err as Error).message}` }
    return refs.map(r => proveSlice(this.o.tensor(ei, 'in', r.input), r.axis, r.index))
  }
}
