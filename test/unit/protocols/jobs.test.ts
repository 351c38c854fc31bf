import { describe, expect, it } from 'vitest'
import { JobScheduler, expectedStarts, type JobRequest } from '../../../protocols/scheduling/jobs.js'

// The admission rules of a peer's job scheduler: CPU slots, memory, FIFO
// order, and deadlines (refused up front, dropped from the queue when they
// become unreachable).

const MiB = 1024 * 1024
const job = (id: string, o: Partial<JobRequest> = {}): JobRequest => ({ id, taskId: Number(id.replace(/\D/g, '') || 0), kind: 'train', memory: 100 * MiB, estimateMs: 10_000, deadline: 1e12, ...o })

describe('job scheduler', () => {
  it('runs up to maxJobs at once and queues the rest in order', () => {
    const s = new JobScheduler({ maxJobs: 2, maxMemory: 1024 * MiB })
    expect(s.admit(job('a1'), 0)).toEqual({ decision: 'run' })
    expect(s.admit(job('a2'), 0)).toEqual({ decision: 'run' })
    expect(s.admit(job('a3'), 0)).toMatchObject({ decision: 'queue', position: 1, expectedStart: 10_000 })
    expect(s.admit(job('a4'), 0)).toMatchObject({ decision: 'queue', position: 2, expectedStart: 10_000 })
    expect(s.admit(job('a5'), 0)).toMatchObject({ decision: 'queue', position: 3, expectedStart: 20_000 })
    expect(s.snapshot().running.map(j => j.id)).toEqual(['a1', 'a2'])
    const p = s.finish('a2', 9000)
    expect(p.start.map(j => j.id)).toEqual(['a3'])
    expect(p.drop).toEqual([])
    expect(s.snapshot().running.map(j => j.id)).toEqual(['a1', 'a3'])
    expect(s.snapshot().queued.map(j => j.id)).toEqual(['a4', 'a5'])
  })

  it('keeps the running jobs within the memory limit', () => {
    const s = new JobScheduler({ maxJobs: 8, maxMemory: 500 * MiB })
    expect(s.admit(job('m1', { memory: 300 * MiB }), 0).decision).toBe('run')
    expect(s.admit(job('m2', { memory: 300 * MiB }), 0).decision).toBe('queue')
    expect(s.memoryInUse).toBe(300 * MiB)
    expect(s.finish('m1', 5000).start.map(j => j.id)).toEqual(['m2'])
    expect(s.memoryInUse).toBe(300 * MiB)
  })

  it('is strictly FIFO: a small job does not overtake a big one waiting for memory', () => {
    const s = new JobScheduler({ maxJobs: 8, maxMemory: 500 * MiB })
    s.admit(job('f1', { memory: 300 * MiB }), 0)
    expect(s.admit(job('f2', { memory: 400 * MiB }), 0).decision).toBe('queue')
    // 100 MiB are free, but f2 is ahead
    expect(s.admit(job('f3', { memory: 100 * MiB }), 0).decision).toBe('queue')
    expect(s.finish('f1', 1000).start.map(j => j.id)).toEqual(['f2', 'f3'])
  })

  it('refuses a job bigger than the whole memory budget, whatever else runs', () => {
    const s = new JobScheduler({ maxJobs: 2, maxMemory: 256 * MiB })
    const a = s.admit(job('b1', { memory: 300 * MiB }), 0)
    expect(a.decision).toBe('refuse')
    expect(a.decision === 'refuse' && a.reason).toMatch(/needs 300 MiB, more than the 256 MiB/)
    expect(s.snapshot().queued).toEqual([])
  })

  it('refuses a job that could not finish by its deadline, running or queued', () => {
    const s = new JobScheduler({ maxJobs: 1, maxMemory: 1024 * MiB })
    // alone, but its own work is longer than the time left
    expect(s.admit(job('d1', { estimateMs: 60_000, deadline: 30_000 }), 0).decision).toBe('refuse')
    expect(s.admit(job('d2', { estimateMs: 20_000 }), 0).decision).toBe('run')
    // it would start at 20 s and end at 40 s: past 30 s
    const late = s.admit(job('d3', { estimateMs: 20_000, deadline: 30_000 }), 0)
    expect(late.decision).toBe('refuse')
    expect(late.decision === 'refuse' && late.reason).toMatch(/after its deadline/)
    // ends at 40 s: in time
    expect(s.admit(job('d4', { estimateMs: 20_000, deadline: 40_000 }), 0).decision).toBe('queue')
  })

  it('drops a queued job that can no longer meet its deadline, and the ones behind it move up', () => {
    const s = new JobScheduler({ maxJobs: 1, maxMemory: 1024 * MiB })
    s.admit(job('q1', { estimateMs: 10_000 }), 0)
    expect(s.admit(job('q2', { estimateMs: 10_000, deadline: 25_000 }), 0).decision).toBe('queue')
    expect(s.admit(job('q3', { estimateMs: 10_000, deadline: 40_000 }), 0).decision).toBe('queue')
    // q1 overran its estimate: at 18 s q2 could end at 28 s at best
    const p = s.pump(18_000)
    expect(p.drop.map(d => d.job.id)).toEqual(['q2'])
    expect(p.drop[0].reason).toMatch(/queued since 18 s, it would finish ~3 s after its deadline/)
    expect(p.start).toEqual([])
    expect(s.snapshot().queued.map(j => j.id)).toEqual(['q3'])
    expect(s.finish('q1', 19_000).start.map(j => j.id)).toEqual(['q3'])
  })

  it('forgets a cancelled queued job', () => {
    const s = new JobScheduler({ maxJobs: 1, maxMemory: 1024 * MiB })
    s.admit(job('c1'), 0)
    s.admit(job('c2'), 0)
    s.admit(job('c3'), 0)
    expect(s.finish('c2', 100)).toEqual({ start: [], drop: [] })
    expect(s.snapshot().queued.map(j => j.id)).toEqual(['c3'])
    expect(s.has('c2')).toBe(false)
  })

  it('will not schedule one job id twice, and checks its limits', () => {
    const s = new JobScheduler({ maxJobs: 1, maxMemory: MiB })
    s.admit(job('x1', { memory: 1 }), 0)
    expect(() => s.admit(job('x1', { memory: 1 }), 0)).toThrow(/already scheduled/)
    expect(() => new JobScheduler({ maxJobs: 0, maxMemory: MiB })).toThrow(/maxJobs/)
    expect(() => new JobScheduler({ maxJobs: 1, maxMemory: Number.NaN })).toThrow(/maxMemory/)
  })

  it('expectedStarts frees slots in order of the running jobs\' ends', () => {
    const running = [
      { ...job('r1', { estimateMs: 30_000 }), state: 'running' as const, queuedAt: 0, startedAt: 0 },
      { ...job('r2', { estimateMs: 5000 }), state: 'running' as const, queuedAt: 0, startedAt: 0 }
    ]
    expect(expectedStarts(running, [job('w1'), job('w2'), job('w3')], { maxJobs: 2, maxMemory: 1e12 }, 1000)).toEqual([5000, 15_000, 25_000])
  })
})
