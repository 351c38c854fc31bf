// FAULT INJECTION specs (see fault.ts); no TensorFlow.js here, so the peer process can parse them.

export interface OpFault { kernel: string, step: number }
export interface TrainFaults { ops: OpFault[], weights: number[] }

export const NO_FAULTS: TrainFaults = { ops: [], weights: [] }

export function parseOpFault (s: string): OpFault {
  const m = /^([A-Za-z_][\w]*)@(\d+)$/.exec(s.trim())
  if (m == null) throw new Error(`fault op must be <kernel>@<step> (e.g. BatchMatMul@7), got "${s}"`)
  const step = Number(m[2])
  if (!Number.isSafeInteger(step) || step < 1) throw new Error(`fault step must be ≥ 1, got "${m[2]}"`)
  return { kernel: m[1], step }
}

export function hasFaults (f: TrainFaults | undefined): f is TrainFaults {
  return f != null && (f.ops.length > 0 || f.weights.length > 0)
}
