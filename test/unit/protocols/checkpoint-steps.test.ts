import { describe, expect, it } from 'vitest'
import { challengeableCheckpoints, checkpointStepsOf, checkpointsToChallenge } from '../../../protocols/verification/checkpoint-steps.js'
import { withheldRunCheckpoints } from '../../../protocols/verification/chain-run.js'
import { checkpointLoads } from '../../../protocols/verification/sample.js'
import { requiredSample } from '../../../protocols/verification/verdict.js'
import { isCheckpointStep } from '../../../devnet/chain/runtime/availability.js'
import { toDomainEvent } from '../../../node/roles/chain-link.js'

describe('what a verifier that cannot obtain the run challenges', () => {
  it('checkpoints every checkpoint_every steps and at the last one; every one a sample loads, and 0', () => {
    expect(checkpointStepsOf(10, 5)).toEqual([0, 5, 10])
    expect(checkpointStepsOf(12, 5)).toEqual([0, 5, 10, 12])
    // 1-based sampled steps: step s replays from the checkpoint at or before s - 1
    expect(withheldRunCheckpoints([8, 3], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0, 5])
    expect(withheldRunCheckpoints([7, 12], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0, 5, 10])
    expect(withheldRunCheckpoints([12], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0, 10])
  })
})

describe('what an assigned verifier may challenge (the chain\'s CheckpointNotNeeded bound)', () => {
  it('checkpoint 0, the checkpoint before each sampled unit, and a diverged proof\'s last state', () => {
    // 1-based steps 3, 8 replay from 0 and 5 (checkpoints every 5 of 12 steps); 12 from 10
    expect(challengeableCheckpoints([3, 8, 12], 12, 5)).toEqual([0, 5, 10])
    expect(challengeableCheckpoints([8], 12, 5)).toEqual([0, 5])
    expect(challengeableCheckpoints([8], 12, 5, 1, true)).toEqual([0, 5, 12])
    // segments of m = 2 named by their last step: segment 4 (steps 9, 10) starts at state 8, whose latest checkpoint is 5
    expect(challengeableCheckpoints([10], 12, 5, 2)).toEqual([0, 5])
  })

  it('holds every checkpoint the required sample\'s replay loads, and only checkpoints, for many seeds and spacings', () => {
    const account = '0x' + '11'.repeat(32)
    for (const [steps, every, m] of [[1000, 10, 1], [1000, 5, 1], [40, 1, 1], [203, 8, 4], [100, 10, 2]] as const) {
      for (let i = 0; i < 50; i++) {
        const seed = '0x' + i.toString(16).padStart(64, '0')
        const required = requiredSample(seed, account, steps, 2, m)
        const allowed = challengeableCheckpoints(required, steps, every, m)
        const loads = checkpointLoads(required, checkpointStepsOf(steps, every), m, steps)
        expect(loads.filter(c => !allowed.includes(c))).toEqual([])
        // a verifier denied the run index challenges these (with 0 and a diverged last state): all allowed
        for (const diverged of [false, true]) {
          const both = challengeableCheckpoints(required, steps, every, m, diverged)
          expect(withheldRunCheckpoints(required, { stepCount: steps, checkpointEvery: every, diverged }, m).filter(c => !both.includes(c))).toEqual([])
        }
        expect(allowed.filter(c => !isCheckpointStep(c, every, steps, m))).toEqual([])
        // a bound: at most one per sampled unit, and checkpoint 0
        expect(allowed.length).toBeLessThanOrEqual(required.length + 1)
      }
    }
  })
})

describe('what the node challenges of the checkpoints it cannot use', () => {
  it('anyone else: all; an assigned verifier: those its required sample needs, else its required sample is verified instead', () => {
    expect(checkpointsToChallenge([5, 30, 10], undefined, true)).toEqual([5, 30, 10])
    const allowed = new Set([0, 10, 20])
    // one outside the bound (an extra sampled step's) is left out: the chain would refuse the call naming it
    expect(checkpointsToChallenge([30, 10], allowed, true)).toEqual([10])
    // none inside: a larger sample falls back to the required one, whose checkpoints are all inside
    expect(checkpointsToChallenge([30, 40], allowed, true)).toBe('required')
    expect(checkpointsToChallenge([30], allowed, false)).toEqual([30])
  })
})

describe('assignment events for the role actors', () => {
  it('VerifiersAssigned is work only for the accounts drawn', () => {
    const e = (verifiers: string[]) => ({ section: 'arbitration', method: 'VerifiersAssigned', data: { taskId: 3n, verifiers, round: 0, seedBlock: 9, deadline: 40 }, blockHash: '0x', blockNumber: 10 })
    expect(toDomainEvent(e(['0xaa', '0xbb']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: true })
    expect(toDomainEvent(e(['0xaa']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: false })
  })
})
