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
  /** training: [step, loss] of the progress reports so far (thinned to at most CURVE_POINTS) */
  curve?: Array<[number, number]>
  updatedAt: number
}

export const CURVE_POINTS = 400

/**
 * Appends a point. A full curve keeps every other point, which doubles the
 * spacing of its first points; a newer point closer than that to the one
 * before replaces the newest instead of adding one, so the curve stays evenly
 * spread over the whole run and always ends at the latest report.
 */
export function addCurvePoint (curve: Array<[number, number]>, step: number, loss: number, max = CURVE_POINTS): void {
  if (!Number.isFinite(loss) || (curve.length > 0 && curve[curve.length - 1][0] >= step)) return
  const n = curve.length
  if (n >= 3 && curve[n - 1][0] - curve[n - 2][0] < curve[1][0] - curve[0][0]) { curve[n - 1] = [step, loss]; return }
  curve.push([step, loss])
  if (curve.length > max) {
    const kept = curve.filter((_, i) => i % 2 === 0 || i === curve.length - 1)
    curve.splice(0, curve.length, ...kept)
  }
}

/**
 * What a training job's events say, for the progress table (with the loss
 * curve so far, into `curve`) and the peer's log (a progress line every 5 s at
 * most); `onCheckpoint` hears each checkpoint written.
 */
export function trainingEvents (
  taskId: number, progress: Map<number, WorkProgress>, log: Logger, curve: Array<[number, number]> = [], onCheckpoint?: (step: number) => void
): (e: JobEvent) => void {
  let lastLog = 0
  return e => {
    if (e.type === 'log') {
      if (e.level === 'warn') log.warn({ taskId }, e.message)
      else log.debug({ taskId }, e.message)
      return
    }
    if (e.type === 'checkpoint') { onCheckpoint?.(e.step); return }
    const p = {
      step: e.step, steps: e.steps, loss: e.loss, samplesPerSec: Math.round(e.samplesPerSec),
      ...(Number.isFinite(e.etaSec) ? { etaSec: Math.round(e.etaSec) } : {})
    }
    addCurvePoint(curve, e.step, e.loss)
    progress.set(taskId, { taskId, phase: 'training', ...p, curve, updatedAt: Date.now() })
    if (Date.now() - lastLog > 5000) { lastLog = Date.now(); log.info({ taskId, ...p }, 'training') }
  }
}
