import { describe, expect, it } from 'vitest'
import { encode } from 'cborg'
import { decodeMessage, encodeTopicMessage, MAX_MESSAGE_BYTES } from '../../../protocols/messages/index.js'

const peer = '12D3KooWF9xQ3P7ozsnN9L1tXi9c7LMdM3Nzv3p6pfSr9KcuPBWf'
const h = '0x' + 'ab'.repeat(32)
const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'

describe('gossip message schemas', () => {
  it('round-trips every topic', () => {
    const task = { taskId: 3, programHash: h, programCid: cid, submitter: peer, steps: 100, createdAt: 5 }
    expect(decodeMessage('tasks', encodeTopicMessage('tasks', task))).toMatchObject(task)
    const proof = { taskId: 3, solver: peer, proofRoot: h, finalStateRoot: h, proofCid: cid, checkpoints: [{ step: 10, cid }] }
    expect(decodeMessage('proofs', encodeTopicMessage('proofs', proof))).toMatchObject(proof)
    const verdict = { taskId: 3, verifier: peer, accept: false, checkedSteps: [4, 9], firstBadStep: 9 }
    expect(decodeMessage('verdicts', encodeTopicMessage('verdicts', verdict))).toMatchObject(verdict)
    const d = { taskId: 3, disputeId: 1, challenger: peer, defender: peer, phase: 'opened' }
    expect(decodeMessage('disputes', encodeTopicMessage('disputes', d))).toMatchObject(d)
  })

  it('rejects malformed, unknown, extra, wrongly typed and oversized messages with a reason', () => {
    const ok = { v: 1, type: 'task', taskId: 3, programHash: h, programCid: cid, submitter: peer, steps: 100, createdAt: 5 }
    expect(() => decodeMessage('tasks', new Uint8Array([0xff, 0x00, 0x13]))).toThrow(/CBOR/)
    expect(() => decodeMessage('tasks', encode([1, 2]))).toThrow(/map/)
    expect(() => decodeMessage('tasks', encode({ ...ok, v: 2 }))).toThrow(/version 2/)
    expect(() => decodeMessage('tasks', encode({ ...ok, evil: 1 }))).toThrow(/unexpected field "evil"/)
    expect(() => decodeMessage('tasks', encode({ ...ok, taskId: -1 }))).toThrow(/taskId/)
    expect(() => decodeMessage('tasks', encode({ ...ok, programHash: '0x12' }))).toThrow(/programHash: malformed/)
    expect(() => decodeMessage('tasks', encode({ ...ok, submitter: 'nope' }))).toThrow(/submitter/)
    expect(() => decodeMessage('tasks', encode({ ...ok, type: 'proof' }))).toThrow(/type/)
    expect(() => decodeMessage('tasks', new Uint8Array(MAX_MESSAGE_BYTES + 1))).toThrow(/exceeds/)
    const { steps, ...missing } = ok
    void steps
    expect(() => decodeMessage('tasks', encode(missing))).toThrow(/steps/)
    expect(() => encodeTopicMessage('verdicts', { taskId: 1, verifier: peer, accept: true, checkedSteps: Array(2000).fill(1) })).toThrow(/more than 1024/)
  })
})
