import { describe, expect, it } from 'vitest'
import { checkpointStepsOf } from '../../../protocols/verification/checkpoint-steps.js'
import { withheldRunCheckpoints } from '../../../protocols/verification/chain-run.js'
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

describe('assignment events for the role actors', () => {
  it('VerifiersAssigned is work only for the accounts drawn', () => {
    const e = (verifiers: string[]) => ({ section: 'arbitration', method: 'VerifiersAssigned', data: { taskId: 3n, verifiers, round: 0, seedBlock: 9, deadline: 40 }, blockHash: '0x', blockNumber: 10 })
    expect(toDomainEvent(e(['0xaa', '0xbb']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: true })
    expect(toDomainEvent(e(['0xaa']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: false })
  })
})
