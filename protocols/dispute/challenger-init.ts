import type { SliceProof } from '../commit/tensor.js'
import type { SegmentProof } from './claim.js'
import type { Msg, Signed } from './messages.js'
import type { Divergence } from './nan.js'
import type { PlayerInit, ProofSpacing } from './player.js'

// What the challenger of the bisection starts from: the defender's committed
// roots and its own run of the step (its state, program, skeleton, dataset
// and NaNs), apart so that its game and its claims share them.

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
