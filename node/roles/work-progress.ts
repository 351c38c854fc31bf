import type { JobEvent } from '../engine/protocol.js'
import type { Logger } from '../log.js'

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

/** What a training job's events say, for the progress table and the peer's log (a progress line every 5 s at most). */
export function trainingEvents (taskId: number, progress: Map<number, WorkProgress>, log: Logger): (e: JobEvent) => void {
  let lastLog = 0
  return e => {
    if (e.type === 'log') {
      if (e.level === 'warn') log.warn({ taskId }, e.message)
      else log.debug({ taskId }, e.message)
      return
    }
    if (e.type === 'checkpoint') return
    const p = { step: e.step, steps: e.steps, loss: e.loss, samplesPerSec: Math.round(e.samplesPerSec), ...(Number.isFinite(e.etaSec) ? { etaSec: Math.round(e.etaSec) } : {}) }
    progress.set(taskId, { taskId, phase: 'training', ...p, updatedAt: Date.now() })
    if (Date.now() - lastLog > 5000) { lastLog = Date.now(); log.info({ taskId, ...p }, 'training') }
  }
}
