import type { EngineFaults } from '../engine/protocol.js'
import { parseOpFault, type OpFault } from '../train/fault-spec.js'

// FAULT INJECTION for tests and the devnet (`proofswarm join --fault <spec>`,
// repeatable), so every dispute path can be provoked on purpose:
//   tamper-op=<kernel>@<step>  the training child corrupts that op's output at
//                              1-based step <step>, consistently (node/train/fault.ts)
//   tamper-weight[@<step>]     after <step> (default 1; 0: the initial state,
//                              caught by an initial-state claim), element 0 of
//                              weight 0 is set to |v| + 1: the tape stays honest
//   lie-in-bisection           the defender answers a bisection query with
//                              children that do not hash to their parent
//   silent                     the defender never answers dispute requests
//   short-segment              (roots every m > 1 steps) the defender sends its segment off
//                              chain with its last inner root left out, a message the
//                              challenger cannot use, hoping it gives up; forced on chain,
//                              where only a segment of the right length is taken, it posts
//                              its real one
//   bad-checkpoint             the solver flips one byte of every checkpoint's data
//                              before publishing it and keeps no true copy, so
//                              verifiers find the mismatch and it cannot answer
//                              a data-availability challenge (node/availability)
//   fake-divergence@<step>     the solver stops before 1-based <step> and commits a diverged
//                              proof with a made-up divergence point (to be paid for less
//                              work): every verifier replays that step and disputes it
//   withhold-dataset           the submitter announces its task without its custom
//                              dataset (a coalition submitter hands it only to its
//                              solver): drawn verifiers cannot fetch it and challenge
//                              it on chain (challenge_dataset), which its node still
//                              answers from its dataset directory
//   train-through-nan          the solver trains on through a NaN and commits a complete
//                              proof of NaN states instead of a diverged one (a `nan`
//                              claim of the verifier that replays the step wins)
// Truebit forced errors are not a fault: an honest solver whose private VRF
// draw names on-chain step f (node/dispute/forced-error.ts) trains honestly
// and commits the leaf of state f + 1 as its forced mark
// (protocols/dispute/forced-leaf.ts); its tapes and segment re-runs are
// honest, only the training job is told to mark that leaf.

export interface NodeFaults {
  ops: OpFault[]
  weights: number[]
  lie: boolean
  silent: boolean
  shortSegment?: boolean
  badCheckpoint?: boolean
  withholdDataset?: boolean
  nanThrough?: boolean
  fakeDivergence?: number
}

export const NO_NODE_FAULTS: NodeFaults = { ops: [], weights: [], lie: false, silent: false }

export function parseNodeFaults (specs: readonly string[]): NodeFaults {
  const f: NodeFaults = { ops: [], weights: [], lie: false, silent: false }
  for (const raw of specs) {
    const s = raw.trim()
    if (s.startsWith('tamper-op=')) f.ops.push(parseOpFault(s.slice('tamper-op='.length)))
    else if (s === 'tamper-weight') f.weights.push(1)
    else if (/^tamper-weight@\d+$/.test(s)) f.weights.push(Number(s.slice(14)))
    else if (s === 'lie-in-bisection') f.lie = true
    else if (s === 'silent') f.silent = true
    else if (s === 'short-segment') f.shortSegment = true
    else if (s === 'bad-checkpoint') f.badCheckpoint = true
    else if (s === 'withhold-dataset') f.withholdDataset = true
    else if (s === 'train-through-nan') f.nanThrough = true
    else if (/^fake-divergence@[1-9]\d*$/.test(s)) f.fakeDivergence = Number(s.slice(16))
    else throw new Error(`unknown fault "${raw}" (use tamper-op=<kernel>@<step>, tamper-weight[@<step>], lie-in-bisection, silent, short-segment, bad-checkpoint, withhold-dataset, train-through-nan, fake-divergence@<step>)`)
  }
  return f
}

export function anyFault (f: NodeFaults): boolean {
  return f.ops.length > 0 || f.weights.length > 0 || f.lie || f.silent || f.shortSegment === true || f.badCheckpoint === true || f.withholdDataset === true ||
    f.nanThrough === true || f.fakeDivergence !== undefined
}

/** The faults a tape job re-enacts: the node's op and weight faults (a forced error changes no state: nothing to re-enact). */
export function tapeFaults (f: NodeFaults): Pick<EngineFaults, 'ops' | 'weights'> {
  return { ops: f.ops, weights: f.weights }
}

/** The faults of a training job: a tape job's, plus the NaN faults, which are training's alone (a tape job tapes whatever the step holds). */
export function trainFaults (f: NodeFaults, forcedErrors: readonly number[] | null | undefined): EngineFaults {
  return {
    ...tapeFaults(f),
    ...(forcedErrors != null && forcedErrors.length > 0 ? { forcedSteps: [...forcedErrors] } : {}),
    ...(f.nanThrough === true ? { nanThrough: true } : {}),
    ...(f.fakeDivergence !== undefined ? { fakeDivergence: f.fakeDivergence } : {})
  }
}
