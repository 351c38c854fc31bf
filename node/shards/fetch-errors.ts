// The small pieces the block fetcher's loop and its provider workers share.

/** A provider fault that will not pass by trying again (protocol error, refusal, ban). */
export class PermanentError extends Error {}

export function concatChunks (chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0))
  let off = 0
  for (const c of chunks) { out.set(c, off); off += c.length }
  return out
}

export function timeoutError (): Error {
  const e = new Error('no answer in time')
  e.name = 'TimeoutError'
  return e
}

export function isAborted (signal?: AbortSignal): boolean {
  return signal?.aborted === true
}
