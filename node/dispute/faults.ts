import { parseOpFault, type OpFault } from '../train/fault-spec.js'

// FAULT INJECTION for tests and the devnet (`proofswarm join --fault <spec>`,
// repeatable), so every dispute path can be provoked on purpose:
//   tamper-op=<kernel>@<step>  the training child corrupts that op's output at
//                              1-based step <step>, consistently (node/train/fault.ts)
//   tamper-weight[@<step>]     a weight is perturbed after <step> (default 1; 0: the
//                              initial state, caught by an initial-state claim)
//   lie-in-bisection           the defender answers a bisection query with
//                              children that do not hash to their parent
//   silent                     the defender never answers dispute requests
//   bad-checkpoint             the solver flips one byte of every checkpoint's data
//                              before publishing it and keeps no true copy, so
//                              verifiers find the mismatch and it cannot answer
//                              a data-availability challenge (node/availability)
// Truebit forced errors are not a fault: an honest solver whose private VRF
// draw names on-chain step i (engine step i+1; node/dispute/forced-error.ts)
// corrupts that step the same way as tamper-op, on FORCED_ERROR_KERNEL.

export interface NodeFaults { ops: OpFault[], weights: number[], lie: boolean, silent: boolean, badCheckpoint?: boolean }

export const NO_NODE_FAULTS: NodeFaults = { ops: [], weights: [], lie: false, silent: false }

/** The kernel an honest solver corrupts for a forced error (present in every MLP/CNN step, element-adjudicable). */
export const FORCED_ERROR_KERNEL = 'BatchMatMul'

export function parseNodeFaults (specs: readonly string[]): NodeFaults {
  const f: NodeFaults = { ops: [], weights: [], lie: false, silent: false }
  for (const raw of specs) {
    const s = raw.trim()
    if (s.startsWith('tamper-op=')) f.ops.push(parseOpFault(s.slice('tamper-op='.length)))
    else if (s === 'tamper-weight') f.weights.push(1)
    else if (/^tamper-weight@\d+$/.test(s)) f.weights.push(Number(s.slice(14)))
    else if (s === 'lie-in-bisection') f.lie = true
    else if (s === 'silent') f.silent = true
    else if (s === 'bad-checkpoint') f.badCheckpoint = true
    else throw new Error(`unknown fault "${raw}" (use tamper-op=<kernel>@<step>, tamper-weight[@<step>], lie-in-bisection, silent, bad-checkpoint)`)
  }
  return f
}

export function anyFault (f: NodeFaults): boolean {
  return f.ops.length > 0 || f.weights.length > 0 || f.lie || f.silent || f.badCheckpoint === true
}

/** Arguments for the training/trace child: the node's faults plus its forced error (on-chain step, 0-based). */
export function faultArgs (f: NodeFaults, forcedError: number | null | undefined): string[] {
  const ops = [...f.ops]
  if (forcedError != null) ops.push({ kernel: FORCED_ERROR_KERNEL, step: forcedError + 1 })
  return [...ops.flatMap(o => ['--fault-op', `${o.kernel}@${o.step}`]), ...f.weights.flatMap(w => ['--fault-weight', String(w)])]
}
