import { describe, expect, it } from 'vitest'
import { checkpointStepsOf, firstNeededCheckpoint } from '../../../protocols/verification/checkpoint-steps.js'
import { toDomainEvent } from '../../../node/roles/chain-link.js'

describe('what a verifier that cannot obtain the run challenges', () => {
  it('checkpoints every checkpoint_every steps and at the last one; the first one a sample loads', () => {
    expect(checkpointStepsOf(10, 5)).toEqual([0, 5, 10])
    expect(checkpointStepsOf(12, 5)).toEqual([0, 5, 10, 12])
    // 1-based sampled steps: step s replays from the checkpoint at or before s - 1
    expect(firstNeededCheckpoint([8, 3], 12, 5)).toBe(0)
    expect(firstNeededCheckpoint([7, 12], 12, 5)).toBe(5)
    expect(firstNeededCheckpoint([12], 12, 5)).toBe(10)
  })
})

describe('assignment events for the role actors', () => {
  it('VerifiersAssigned is work only for the accounts drawn', () => {
    const e = (verifiers: string[]) => ({ section: 'arbitration', method: 'VerifiersAssigned', data: { taskId: 3n, verifiers, round: 0, seedBlock: 9, deadline: 40 }, blockHash: '0x', blockNumber: 10 })
    expect(toDomainEvent(e(['0xaa', '0xbb']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: true })
    expect(toDomainEvent(e(['0xaa']), '0xbb')).toEqual({ type: 'chain.verifiersAssigned', taskId: 3, forMe: false })
  })
})
