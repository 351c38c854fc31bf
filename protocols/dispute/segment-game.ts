import { bytesEqual, fromHex, merkleProof, sha256 } from '../commit/merkle.js'
import { committedStep, segmentLength } from '../pol/segments.js'
import type { Claim, SegmentProof } from './claim.js'
import type { ChallengerSegment } from './challenger-init.js'
import { signAfter } from './player.js'
import { samePre } from './forced-leaf.js'
import { initialRootCheckable } from './claim-proofs.js'
import type { Msg, Signed, SignFn } from './messages.js'

// The level above the step game when a proof commits a state root every m > 1
// steps (docs/disputes.md "Segments"). The defender signs the L − 1 roots
// inside the disputed segment j (its ends are committed leaves j and j + 1);
// the challenger opens the first step of [leaf j, r_1 … r_{L−1}, leaf j+1]
// whose post-root differs from its own; from the defender's commit of that
// step on, game.ts plays as in a one-step dispute (DefenderInit.opening,
// ChallengerInit.segment), every claim carrying the signed segment.

export interface SegmentPlayerInit {
  disputeId: number
  genesis: Uint8Array
  taskId: number
  account: Uint8Array
  sign: SignFn
  /** the disputed segment and the proof's shape */
  j: number
  rootEvery: number
  steps: number
  /** the proof's committed roots (hex), leaf j = the state after step min(j·m, steps) */
  stateRoots: string[]
}

/** The segment's first step and its L transitions. */
export function segmentShape (o: Pick<SegmentPlayerInit, 'j' | 'rootEvery' | 'steps'>): { first: number, length: number } {
  return { first: committedStep(o.j, o.steps, o.rootEvery), length: segmentLength(o.j, o.steps, o.rootEvery) }
}

/** The claim part that lets the chain rebuild the segment's roots: the signed segment and the committed ends with their paths. */
export function segmentProofOf (o: Pick<SegmentPlayerInit, 'j' | 'stateRoots'>, segment: Signed, start?: Uint8Array): SegmentProof {
  const leaves = o.stateRoots.map(fromHex)
  // `start`: the preimage of a forced error's marked leaf j, which the chain takes for it as a pre-state
  return { msg: segment, start: start ?? leaves[o.j], startPath: merkleProof(leaves, o.j), end: leaves[o.j + 1], endPath: merkleProof(leaves, o.j + 1) }
}

// ---------------------------------------------------------------- defender

export interface SegmentDefenderInit extends SegmentPlayerInit {
  /** the roots of the states after steps c_j + 1 … c_j + L − 1, from the defender's re-run of the segment */
  inside: Uint8Array[]
  /** the canonical program bytes: a step-0 badOpen carries them */
  program?: Uint8Array
}

export type SegmentOpenResult = { step: number, opening: Signed } | { claim: Claim } | { ignore: string }

export class SegmentDefender {
  readonly first: number
  readonly length: number
  private segmentMsg?: Signed
  private opened?: { step: number, signed: Signed }

  constructor (private readonly o: SegmentDefenderInit) {
    const { first, length } = segmentShape(o)
    if (o.inside.length !== length - 1) throw new Error(`segment ${o.j} has ${length - 1} roots inside it, not ${o.inside.length}`)
    this.first = first
    this.length = length
  }

  /** Message 0: signed once, so the same segment always goes out (off chain or forced on chain). */
  segment (): Signed {
    this.segmentMsg ??= signAfter(this.o, { t: 'segment', d: this.o.disputeId, j: this.o.j, roots: this.o.inside }, undefined, 0)
    return this.segmentMsg
  }

  get proof (): SegmentProof { return segmentProofOf(this.o, this.segment()) }

  /** [leaf j, r_1 … r_{L−1}, leaf j+1] */
  get roots (): Uint8Array[] { return [fromHex(this.o.stateRoots[this.o.j]), ...this.o.inside, fromHex(this.o.stateRoots[this.o.j + 1])] }

  /**
   * The challenger's opening (signature verified by the caller): the step to
   * tape and commit, or a claim when it breaks the rules provably. The
   * defender commits to ONE step per dispute: a second opening of another
   * step (or of this step with other roots) is the challenger's equivocation
   * (badOpen with `other`), never a second tape whose tree the challenger could
   * set against the first, nor a forced opening our commit does not answer.
   */
  onOpen (m: Msg, signed: Signed): SegmentOpenResult {
    if (m.t !== 'open' || m.d !== this.o.disputeId || m.seq !== 1) return { ignore: 'not an opening of this dispute' }
    if (!bytesEqual(m.prev, sha256(this.segment().m))) return { ignore: 'an opening of another segment message' }
    const base = { v: 1 as const, kind: 'badOpen' as const, seg: this.proof }
    if (this.opened !== undefined) {
      if (bytesEqual(this.opened.signed.m, signed.m)) return { step: m.step, opening: this.opened.signed }
      // another opening, of another step or of this one with other roots: our commit answers only the first
      return { claim: { ...base, open: this.opened.signed, other: signed, pre: this.roots[0], prePath: [] } }
    }
    const i = m.step - this.first
    if (i < 0 || i >= this.length) return { claim: { ...base, open: signed, pre: this.roots[0], prePath: [] } }
    const mine = this.roots[i]
    // at step 0 the chain upholds a badOpen only if it can recompute state 0: if not, the opening is played like an agreed one
    if (!samePre(m.pre, mine) && (m.step !== 0 || initialRootCheckable(this.o.program))) {
      // it disputes a root it should have agreed with: it should have opened an earlier step
      return { claim: { ...base, open: signed, pre: mine, prePath: [], ...(m.step === 0 && this.o.program !== undefined ? { program: this.o.program } : {}) } }
    }
    this.opened = { step: m.step, signed }
    return { step: m.step, opening: signed }
  }
}

// -------------------------------------------------------------- challenger

export interface SegmentChallengerInit extends SegmentPlayerInit {
  /** the defender's account: its segment must be signed by it */
  defender: Uint8Array
  /** our own roots of the states after steps c_j … c_j + L (L + 1 of them) */
  own: Uint8Array[]
  /**
   * A step c_j ≤ s < c_j + L whose transition our replay found holding a NaN
   * (its pre-state, an op output or its post-state): an honest run commits
   * none, so it is opened even when its post-root agrees, unless a root
   * differs before it. The step game's `nan` claims then decide; opening an
   * agreed transition that holds no NaN wins nothing (docs/disputes.md "Segments").
   */
  nanAt?: number
}

export type SegmentOpening = { send: Signed, step: number, segment: ChallengerSegment } | { fail: string }

export class SegmentChallenger {
  readonly first: number
  readonly length: number

  constructor (private readonly o: SegmentChallengerInit) {
    const { first, length } = segmentShape(o)
    if (o.own.length !== length + 1) throw new Error(`segment ${o.j}: expected our ${length + 1} roots, got ${o.own.length}`)
    if (o.nanAt !== undefined && (!Number.isInteger(o.nanAt) || o.nanAt < first || o.nanAt >= first + length)) throw new Error(`step ${o.nanAt} is not inside segment ${o.j}`)
    this.first = first
    this.length = length
  }

  /**
   * The defender's segment (signature verified by the caller): opens the
   * first transition whose post-root differs from ours, with the agreed
   * pre-root. Both ends are the committed leaves, so a lie anywhere in the
   * list — the committed end included — is reached at some step. A NaN
   * step (`nanAt`) with every root before it agreed is opened instead.
   */
  onSegment (m: Msg, signed: Signed): SegmentOpening {
    if (m.t !== 'segment' || m.d !== this.o.disputeId || m.seq !== 0 || m.j !== this.o.j) return { fail: 'expected the defender\'s segment of this dispute' }
    if (m.roots.length !== this.length - 1) return { fail: `the segment has ${m.roots.length} roots, not ${this.length - 1}` }
    const roots = [fromHex(this.o.stateRoots[this.o.j]), ...m.roots, fromHex(this.o.stateRoots[this.o.j + 1])]
    if (!samePre(roots[0], this.o.own[0])) return { fail: `we disagree with leaf ${this.o.j}: dispute an earlier segment` }
    // a forced error's marked leaf j stands for our own start (the state the solver continued from)
    const start = bytesEqual(roots[0], this.o.own[0]) ? undefined : this.o.own[0]
    if (start !== undefined) roots[0] = start
    const nanI = this.o.nanAt === undefined ? this.length : this.o.nanAt - this.first
    let i = 0
    while (i < this.length && i !== nanI && bytesEqual(roots[i + 1], this.o.own[i + 1])) i++
    if (i === this.length) return { fail: 'every root of the segment is ours: nothing to dispute' }
    const step = this.first + i
    const send = signAfter(this.o, { t: 'open', d: this.o.disputeId, step, pre: roots[i], post: this.o.own[i + 1] }, signed, 0)
    return { send, step, segment: { first: this.first, roots, proof: segmentProofOf(this.o, signed, start), segment: { m, signed }, opening: send } }
  }
}
