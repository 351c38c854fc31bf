// Minimal server-sent-events reader over fetch (Node 20 has no EventSource):
// calls back with each event's data; resolves when the stream ends.

/** Refuse absurd events (a misbehaving peer must not grow our memory unbounded). */
const MAX_EVENT_CHARS = 256 * 1024

export async function readSse (body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const reader = body.getReader()
  const dec = new TextDecoder()
  let buf = ''
  let data: string[] = []
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buf += dec.decode(value, { stream: true })
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '')
        buf = buf.slice(nl + 1)
        if (line === '') {
          if (data.length > 0) onData(data.join('\n'))
          data = []
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line[5] === ' ' ? 6 : 5))
        } // comments (": keep-alive"), id:, event: are not needed here
      }
      if (buf.length > MAX_EVENT_CHARS) throw new Error('server-sent event too large')
    }
  } finally {
    reader.releaseLock()
  }
}
