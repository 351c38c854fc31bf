import { describe, expect, it } from 'vitest'
import { jobsOf, type JobsView } from '../../../node/cli/commands/tasks.js'

// What `proofswarm tasks` says under a task about this peer's jobs of it.

describe('jobs of a task in the tasks list', () => {
  const view: JobsView = {
    limits: { maxJobs: 1, maxMemory: 2 ** 30 },
    memoryInUse: 2 ** 28,
    running: [{ taskId: 3, kind: 'train', memory: 2 ** 28, estimateMs: 1000, startedAt: 10_000 }],
    queued: [{ taskId: 4, kind: 'verify', memory: 2 ** 28, estimateMs: 1000, queuedAt: 15_000 }, { taskId: 3, kind: 'verify', memory: 2 ** 28, estimateMs: 1000, queuedAt: 18_000 }],
    refused: [{ at: '2026-01-01T00:00:00Z', taskId: 5, kind: 'train', reason: 'would finish ~12 s after its deadline' }]
  }

  it('lists running and queued jobs with their age and place in line, and tasks handed back', () => {
    expect(jobsOf(view, 3, 22_000)).toEqual(['train running 12 s', 'verify queued (#2 in line) 4 s'])
    expect(jobsOf(view, 4, 22_000)).toEqual(['verify queued (#1 in line) 7 s'])
    expect(jobsOf(view, 5, 22_000)).toEqual(['train handed back: would finish ~12 s after its deadline'])
    expect(jobsOf(view, 6, 22_000)).toEqual([])
    expect(jobsOf(undefined, 3)).toEqual([])
  })
})
