import type { Claim } from './claim-kinds.js'
import type { JudgeEnv } from './judge-env.js'
import { judgeSegment } from './judge-segment.js'
import { judgeStep } from './judge-step.js'
import { reject, type Ruling } from './ruling.js'

// The on-chain claim that ends a dispute, and the function the chain runs on
// it. A claim states ONE local fact about the defender's signed op tape of
// the disputed step and proves everything it uses against what is on chain
// (proof_root, skeleton_root, dataset_root, program_hash) or signed by the
// defender (its tape root). The chain checks the fact and rules:
//
//   skeleton  entry i's structure (kernel, attrs, refs, shapes, constants)
//             differs from the committed skeleton leaf i     → defender loses
//   input     entry i's input k is not the tensor it names: state tensor t of
//             the agreed pre-state, or output of entry j      → defender loses
//   data      a row/column element of a batch input differs from the dataset
//             row the program's data order puts there        → defender loses
//   element   one output element differs from the reference
//             semantics applied to entry i's own inputs      → defender loses
//   state     the '@state' entry's tensors do not hash to the
//             committed post-state root                      → defender loses
//   convert   one element of a state conversion (@StateRead,
//             @StateWrite: chunked state roots, not yet in
//             use) differs between its chunk and its row or
//             column leaf (judge-state-io.ts)                → defender loses
//   (each of the six: the fact holds → the challenger loses its bond)
//   lie       two signed defender messages contradict, or one contradicts
//             itself                                         → defender loses
//   badOpen   (defender only) the challenger's signed opening disputes a
//             pre-state the defender committed               → challenger loses
//             (at step 0 only if the committed pre-state is the program's
//             initial state, which the chain recomputes from the program bytes)
//   init      (step 0 only) state root 0 differs from the program's
//             initialisation at one element (init-claim.ts) → defender loses
//   nan       one element of a tensor the defender committed (a state tensor
//             of the disputed step's pre- or post-state, or output 0 of an
//             entry of its tape) is a NaN                  → defender loses
//
// A NaN ends the run (nan.ts): an honest defender commits none, so a NaN in
// an operand the claim proves (a state or op input) or in the proven output
// loses for the defender before the reference is run, and the reference's
// AmbiguousNaN (two different NaNs meeting) can never decide a ruling. On a
// diverged proof's last step the tape counts up to its divergence point:
// claims at later entries lose for the challenger, and the divergence
// point's element must be a NaN (and the reference's, from NaN-free operands).
//
// Only the challenger may submit the first seven, init and nan, only the defender
// badOpen, so neither party can end the game with a fact about itself.
//
// The parts: claim-kinds.ts (the claims as data), claim-codec.ts (their
// bytes), judge-env.ts (what the chain knows), claim-fields.ts and
// claim-proofs.ts (checking what a claim carries), judge-step.ts,
// judge-element.ts, judge-nan.ts and judge-segment.ts (the rulings).

export type { ChunkedHead, ClaimChunk, ClaimSlice, TensorHead } from './claim-parts.js'
export type { Claim, ClaimKind, NanClaim, SegmentProof } from './claim-kinds.js'
export { CLAIM_VERSION, MAX_CLAIM_BYTES, decodeClaim, encodeClaim } from './claim-codec.js'
export type { JudgeEnv, OpShapeLike, ReferenceApi } from './judge-env.js'
export { ClaimRejected, type RejectReason, type Ruling } from './ruling.js'
export { posInSlice, valueBits } from './claim-fields.js'
export { MAX_INIT_RECOMPUTE } from './claim-proofs.js'

export function judgeClaim (env: JudgeEnv, c: Claim): Ruling {
  if (env.segment !== undefined && env.segment.rootEvery > 1) return judgeSegment(env, env.segment, c)
  // at m > 1 the one step disputed alone is a diverged proof's last: every other is inside a segment
  if ((env.rootEvery ?? 1) > 1 && (env.divergence === undefined || env.step !== env.stepCount)) reject('InvalidClaim', 'with a root every m > 1 steps only a diverged proof\'s last step is disputed alone')
  return judgeStep(env, c)
}
