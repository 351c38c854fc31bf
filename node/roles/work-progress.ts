// What this peer's engine is doing, by task: for status, the devnet and the dashboard.

export interface WorkProgress {
  taskId: number
  phase: 'training' | 'publishing' | 'verifying' | 'done' | 'failed'
  step?: number
  steps?: number
  loss?: number
  samplesPerSec?: number
  etaSec?: number
  detail?: string
  updatedAt: number
}

/** "step 65/300 (21%)  loss 0.0015  1247 samples/s  ETA 12s" → fields */
export function parseProgressLine (line: string): Partial<WorkProgress> | undefined {
  const m = /step (\d+)\/(\d+).*?loss ([\d.eE+-]+|NaN).*?(\d+) samples\/s.*?ETA (\d+)s/.exec(line)
  if (m == null) return undefined
  return { step: Number(m[1]), steps: Number(m[2]), loss: Number(m[3]), samplesPerSec: Number(m[4]), etaSec: Number(m[5]) }
}
