import type { Stream } from '@libp2p/interface'

// A libp2p stream is gone only once both ends closed their writable side:
// closing ours leaves it on the connection, half open, until the remote closes
// its own, and a peer that never does (or never reads what we wrote, so our
// close waits for the write buffer to drain) held it for ever. Every stream
// this node's protocols end goes through here.

/** how long the remote gets to read our last bytes and close its end */
export const CLOSE_TIMEOUT_MS = 10_000

/** Closes our end, waits up to `timeoutMs` for the remote to close its own, and resets the stream otherwise. */
export async function closeStream (stream: Stream, timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    await stream.close({ signal })
    if (stream.status === 'open' || stream.status === 'closing') {
      await new Promise<void>((resolve, reject) => {
        const done = (): void => { signal.removeEventListener('abort', onAbort); resolve() }
        const onAbort = (): void => { stream.removeEventListener('close', done); reject(new Error('the remote did not close its end of the stream')) }
        stream.addEventListener('close', done, { once: true })
        signal.addEventListener('abort', onAbort, { once: true })
        if (stream.status !== 'open' && stream.status !== 'closing') done()
      })
    }
  } catch (err) {
    stream.abort(err instanceof Error ? err : new Error('stream close failed'))
  }
}
