import { describe, expect, it } from 'vitest'
import { fastMsgIdFn } from '../../../node/p2p/host.js'

// The duplicate filter runs before signature checks, so it must separate
// exactly what gossipsub's StrictSign message id (signer + seqno) separates.
describe('fastMsgIdFn', () => {
  const from = new Uint8Array([0, 36, 8, 1, 18, 32, ...new Array(32).fill(7)])
  const seq = (n: number): Uint8Array => new Uint8Array([0, 0, 0, 0, 0, 0, 0, n])

  it('is the same for copies of one message, whatever their data or signature', () => {
    const a = fastMsgIdFn({ from, seqno: seq(1) })
    expect(fastMsgIdFn({ from: Uint8Array.from(from), seqno: seq(1) })).toBe(a)
  })

  it('differs for another sequence number or another signer', () => {
    const a = fastMsgIdFn({ from, seqno: seq(1) })
    expect(fastMsgIdFn({ from, seqno: seq(2) })).not.toBe(a)
    const other = Uint8Array.from(from); other[10] = 9
    expect(fastMsgIdFn({ from: other, seqno: seq(1) })).not.toBe(a)
  })

  it('cannot be confused by moving bytes between signer and seqno', () => {
    expect(fastMsgIdFn({ from: new Uint8Array([1, 2]), seqno: new Uint8Array([3]) }))
      .not.toBe(fastMsgIdFn({ from: new Uint8Array([1]), seqno: new Uint8Array([2, 3]) }))
  })
})
