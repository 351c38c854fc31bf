import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { Observability } from '../../../node/roles/observability.js'
import { countdown } from '../../../node/cli/commands/tasks.js'
import type { ShardService } from '../../../node/shards/index.js'

const log = { warn: () => {}, info: () => {} } as never

describe('observability', () => {
  it('a failed fetch inside a task method is charged to that task, counted, and listed newest first', async () => {
    const registry = new Registry()
    const obs = new Observability(registry, {}, () => ['verifier'], log)
    // the fault: no provider answers (the real fetcher's error, as the shard service would throw it)
    const shards = obs.recordingShards({ fetchBytes: async () => { throw new Error('no usable provider found within 30 s') } } as unknown as ShardService)
    const ports = obs.instrumentPorts({
      verify: async (_taskId: number) => { await shards.fetchBytes('bafy'); return { accept: true, checkedSteps: [] } },
      train: async (_taskId: number) => { throw new Error('unrelated') }
    })
    await expect(ports.verify(7)).rejects.toThrow('no usable provider')
    await expect(ports.verify(7)).rejects.toThrow()
    await expect(shards.fetchBytes('bafy')).rejects.toThrow()
    expect(obs.failedFetches(7)).toBe(2)
    expect(obs.failedFetches(8)).toBe(0)
    const recent = obs.recentFailures()
    expect(recent.map(f => f.kind)).toEqual(['fetch', 'verification', 'fetch', 'verification', 'fetch'])
    expect(recent[0].taskId).toBeUndefined()
    expect(recent[1]).toMatchObject({ kind: 'verification', taskId: 7 })
    const text = await registry.metrics()
    expect(text).toMatch(/^proofswarm_fetch_failures_total\{what="bytes"\} 3$/m)
    expect(text).toMatch(/^proofswarm_verifications_total\{result="error"\} 2$/m)
  })

  it('tasks by phase follow the pallet events; disputes count only those this peer is a party to', async () => {
    const registry = new Registry()
    const obs = new Observability(registry, {}, () => [], log)
    const ev = (method: string, data: Record<string, unknown>) => obs.onChainEvent({ section: 'arbitration', method, data, blockNumber: 1 } as never, '0xme')
    ev('TaskSubmitted', { taskId: 1 }); ev('TaskSubmitted', { taskId: 2 }); ev('SolverSelected', { taskId: 2 }); ev('ProofCommitted', { taskId: 2 })
    ev('TaskSubmitted', { taskId: 3 }); ev('TaskSettled', { taskId: 3, success: true })
    // a task nobody took in time: over, refunded (it would otherwise count as Unassigned forever)
    ev('TaskSubmitted', { taskId: 4 }); ev('TaskExpired', { taskId: 4 })
    ev('DisputeOpened', { taskId: 2, challenger: '0xother', defender: '0xme' }); ev('DisputeOpened', { taskId: 2, challenger: '0xa', defender: '0xb' })
    ev('DisputeResolved', { taskId: 2, winner: '0xme', loser: '0xother' })
    const text = await registry.metrics()
    expect(text).toMatch(/^proofswarm_tasks\{phase="Unassigned"\} 1$/m)
    expect(text).toMatch(/^proofswarm_tasks\{phase="Verifying"\} 1$/m)
    expect(text).toMatch(/^proofswarm_tasks\{phase="Settled"\} 1$/m)
    expect(text).toMatch(/^proofswarm_tasks\{phase="Expired"\} 1$/m)
    expect(text).toMatch(/^proofswarm_disputes_total\{event="opened"\} 1$/m)
    expect(text).toMatch(/^proofswarm_disputes_total\{event="won"\} 1$/m)
  })

  it('tasks: blocks left of the solve deadline or the challenge window', () => {
    const t = { phase: 'Solving', deadline: 130, challengeEnd: 0, openDisputes: 0 } as never
    expect(countdown(t, 100)).toBe('  solve deadline in 30 blocks')
    expect(countdown({ phase: 'Verifying', deadline: 0, challengeEnd: 150, openDisputes: 0 } as never, 100)).toBe('  challenge window: 50 blocks left')
    expect(countdown({ phase: 'Verifying', deadline: 0, challengeEnd: 90, openDisputes: 1 } as never, 100)).toBe('  challenge window over 10 blocks ago (waiting for the open disputes)')
    expect(countdown({ phase: 'Unassigned', deadline: 1300, challengeEnd: 0, openDisputes: 0 } as never, 100)).toBe('  no solver yet: expires in 1200 blocks (escrow refunded)')
    expect(countdown({ phase: 'Expired', deadline: 1300, challengeEnd: 0, openDisputes: 0 } as never, 2000)).toBe('')
    expect(countdown(t, null)).toBe('')
  })
})
