import { Socket } from 'node:net'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { Stream } from '@libp2p/interface'
import { Uint8ArrayList } from 'uint8arraylist'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uint16BE } from '../../../node/p2p/frames.js'
import { createHost, type Host } from '../../../node/p2p/host.js'

const PROTOCOL = '/proofswarm-test/frames/1'
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

// Write syscalls (writes handed to the kernel, one per _writeGeneric call: a
// write or a writev) per local TCP port, counted in this process while a test runs.
type SocketInternals = Socket & { _writeGeneric: (...args: unknown[]) => unknown }
const proto = Socket.prototype as SocketInternals
const writeGeneric = proto._writeGeneric
const writesByLocalPort = new Map<number, number>()
proto._writeGeneric = function (this: Socket, ...args: unknown[]) {
  const port = this.localPort ?? 0
  writesByLocalPort.set(port, (writesByLocalPort.get(port) ?? 0) + 1)
  return writeGeneric.apply(this, args)
}
const writes = (port: number): number => writesByLocalPort.get(port) ?? 0
const portOf = (h: Host): number => Number(h.getMultiaddrs()[0].toString().split('/')[4])

// Reads a stream to its end; the bytes received so far are in `got`.
function drain (stream: Stream, got: { bytes: number, messages: number }): Promise<void> {
  return (async () => {
    for await (const chunk of stream) { got.bytes += chunk.byteLength; got.messages++ }
  })()
}

describe('frames and write syscalls per message (node/p2p/frames.ts)', () => {
  let sender: Host
  let receiver: Host
  const received = { bytes: 0, messages: 0 }

  beforeAll(async () => {
    ;[sender, receiver] = await Promise.all([0, 1].map(async () => await createHost({
      privateKey: await generateKeyPair('Ed25519'),
      listen: ['/ip4/127.0.0.1/tcp/0'],
      bootstrap: [],
      privateNetwork: true
    })))
    await receiver.handle(PROTOCOL, stream => { void drain(stream, received) })
    await sender.dial(receiver.getMultiaddrs()[0])
  }, 30_000)

  afterAll(async () => {
    proto._writeGeneric = writeGeneric
    await Promise.all([sender?.stop(), receiver?.stop()])
  })

  it('a receiver does not answer every data frame with a window update', async () => {
    const stream = await sender.dialProtocol(receiver.peerId, PROTOCOL)
    await sleep(500) // the stream's opening frames (SYN, ACK, protocol negotiation) are out
    received.bytes = 0
    const sent0 = writes(0) + sumOtherPorts(portOf(receiver))
    const answered0 = writes(portOf(receiver))
    const FRAMES = 200
    for (let i = 0; i < FRAMES; i++) {
      stream.send(new Uint8Array(100).fill(i % 256))
      await sleep(1) // one yamux frame each, not one coalesced send
    }
    for (let i = 0; i < 100 && received.bytes < FRAMES * 100; i++) await sleep(50)
    expect(received.bytes).toBe(FRAMES * 100)
    await sleep(200)
    // the receiver's side of the connection (its listening port) wrote only window updates:
    // one per data frame before (2 writes each), now one once half the 256 KiB window is used
    // (a margin for the DHT's and identify's own traffic on the connection)
    expect(writes(portOf(receiver)) - answered0).toBeLessThanOrEqual(20)
    // the sender wrote every frame (its length and ciphertext: two writes each)
    const sent = writes(0) + sumOtherPorts(portOf(receiver)) - sent0
    expect(sent).toBeGreaterThanOrEqual(FRAMES)
    await stream.close()
  }, 30_000)

  it('a transfer many windows long still completes (window updates still flow)', async () => {
    received.bytes = 0
    const stream = await sender.dialProtocol(receiver.peerId, PROTOCOL)
    const TOTAL = 4 * 1024 * 1024 // 16 initial windows
    const chunk = new Uint8Array(60_000).fill(7)
    let sent = 0
    const deadline = Date.now() + 20_000
    while (sent < TOTAL && Date.now() < deadline) {
      const n = Math.min(chunk.length, TOTAL - sent)
      if (!stream.send(chunk.subarray(0, n))) await new Promise(resolve => stream.addEventListener('drain', resolve, { once: true }))
      sent += n
    }
    await stream.close()
    for (let i = 0; i < 200 && received.bytes < TOTAL; i++) await sleep(50)
    expect(received.bytes).toBe(TOTAL)
  }, 30_000)

  function sumOtherPorts (except: number): number {
    let n = 0
    for (const [port, count] of writesByLocalPort) if (port !== except && port !== 0) n += count
    return n
  }
})

describe('noise frame lengths (uint16BE)', () => {
  it('reads a big-endian length from bytes, and from a list split between the two bytes', () => {
    expect(uint16BE(Uint8Array.of(0x12, 0x34, 0xff))).toBe(0x1234)
    expect(uint16BE(new Uint8ArrayList(Uint8Array.of(0xff), Uint8Array.of(0xfe, 0x00)))).toBe(0xfffe)
    expect(uint16BE(new Uint8ArrayList(Uint8Array.of(0x00, 0x01)))).toBe(1)
  })

  it('throws a RangeError (the decoder\'s "wait for more") below 2 bytes', () => {
    expect(() => uint16BE(new Uint8ArrayList())).toThrow(RangeError)
    expect(() => uint16BE(new Uint8ArrayList(Uint8Array.of(7)))).toThrow(RangeError)
    expect(() => uint16BE(Uint8Array.of(7))).toThrow(RangeError)
  })
})
