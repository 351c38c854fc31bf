import { existsSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ConnectionEncrypter } from '@libp2p/interface'

// Frames and write syscalls per gossip message. Each RPC to a peer is a yamux
// frame inside a noise frame; at 100 peers a peer made ~29 write syscalls per
// message, and their per-frame work (encryption, framing, event dispatch, the
// syscalls) was most of its CPU per message (docs/benchmarks.md, "Swarm scale:
// frames per message"). What multiplied the frames:
// - @libp2p/yamux 8 answers every data frame received with a window-update
//   frame (its stream's sendWindowUpdate sends whenever the receive window is
//   not full). Go's and Rust's yamux send an update only once half the window
//   is used; batchYamuxWindowUpdates makes this peer do the same.
// (Writing each noise frame, its length and ciphertext, in one corked write
// was measured too and dropped: a provider with four slow readers then held
// 2-3x its idle RSS instead of 1.3x, test/reliability/slow-readers.test.ts.)
// It does not change what is sent or accepted: the same bytes reach the peer,
// and yamux still rejects a frame that exceeds the receive window.

/** The fields of @libp2p/yamux 8's YamuxStream that the window rule reads. */
interface YamuxStreamWindow {
  state: number
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

let yamuxPatched: Promise<boolean> | undefined

/**
 * From now on, a yamux stream of this process that has received data sends a
 * window update only once less than half of its receive window is left (and
 * always when the update carries a flag: SYN/ACK while the stream opens).
 * Returns false, changing nothing, if @libp2p/yamux's stream is not the one
 * this was written for. Idempotent.
 */
export async function batchYamuxWindowUpdates (): Promise<boolean> {
  yamuxPatched ??= (async () => {
    // the stream class is not exported: its module, found where '@libp2p/yamux' resolves from here
    const file = (createRequire(import.meta.url).resolve.paths('@libp2p/yamux') ?? [])
      .map(d => join(d, '@libp2p', 'yamux', 'dist', 'src', 'stream.js')).find(f => existsSync(f))
    if (file == null) return false
    const mod = await import(pathToFileURL(realpathSync(file)).href) as {
      YamuxStream?: { prototype: YamuxStreamWindow }
      StreamState?: Record<string, number>
    }
    const proto = mod.YamuxStream?.prototype
    const established = mod.StreamState?.Established
    if (proto == null || typeof proto.sendWindowUpdate !== 'function' || typeof established !== 'number') return false
    const sendWindowUpdate = proto.sendWindowUpdate
    // only in the Established state is an update flagless (Init/SYNReceived carry SYN/ACK,
    // Paused sends none and resets its epoch): those go through unchanged
    proto.sendWindowUpdate = function (this: YamuxStreamWindow) {
      if (this.state === established && this.recvWindowCapacity * 2 > this.recvWindow) return
      sendWindowUpdate.call(this)
    }
    return true
  })()
  return await yamuxPatched
}

// Noise's frame lengths. Its length-prefixed decoder reads a frame's 2-byte
// length after each frame, finds the buffer empty, and takes the RangeError
// thrown as "wait for more data": a new error, with its stack trace, per frame
// read (~8 % of a gossiping peer's CPU, docs/benchmarks.md "Swarm scale:
// frames per message"). Here that error is made once. The bytes read and the
// frames accepted are the same.
const NEED_MORE = new RangeError('Could not decode int16BE')

/** Noise's 2-byte big-endian frame length, as @libp2p/noise's uint16BEDecode reads it. */
export function uint16BE (data: Uint8Array | { length: number, get: (i: number) => number }): number {
  if (data.length < 2) throw NEED_MORE
  return data instanceof Uint8Array ? (data[0] << 8) | data[1] : (data.get(0) << 8) | data.get(1)
}

/** Swaps the length decoder of @libp2p/noise 17's encrypted connection for uint16BE, where noise keeps it; otherwise leaves it. */
function fastFrameLengths (conn: unknown): void {
  const decoder = (conn as { decoder?: { lengthDecoder?: unknown, encodingLength?: (n: number) => number } } | undefined)?.decoder
  if (typeof decoder?.lengthDecoder === 'function' && decoder.encodingLength?.(0) === 2) decoder.lengthDecoder = uint16BE
}

/** The encrypter, with every connection it secures read with uint16BE. */
export function fastNoiseFrameLengths<E extends ConnectionEncrypter> (encrypter: E): E {
  const secureInbound = encrypter.secureInbound.bind(encrypter)
  const secureOutbound = encrypter.secureOutbound.bind(encrypter)
  encrypter.secureInbound = async (conn, options) => {
    const secured = await secureInbound(conn, options)
    fastFrameLengths(secured.connection)
    return secured
  }
  encrypter.secureOutbound = async (conn, options) => {
    const secured = await secureOutbound(conn, options)
    fastFrameLengths(secured.connection)
    return secured
  }
  return encrypter
}
