import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ControlClient } from '../../node/control/client.js'
import { HEADERS_TIMEOUT_MS, MAX_SOCKETS } from '../../node/control/server.js'
import type { Peer } from '../../node/peer.js'
import { sleep, tempDir } from '../helpers/procs.js'
import { startShardPeer } from '../helpers/shard-peer.js'

// The control API answered 500 to a `null` JSON body and to timeoutMs=-5,
// and accepted (and kept) any number of idle sockets. Now bad input is a 400
// that names what was wrong, and idle sockets are capped and timed out.

let dir: { path: string, cleanup: () => Promise<void> }
let peer: Peer
let client: ControlClient

beforeAll(async () => {
  dir = await tempDir('ps-control-api-')
  peer = await startShardPeer(join(dir.path, 'peer'), [])
  client = await ControlClient.fromDataDir(join(dir.path, 'peer'))
})

afterAll(async () => {
  await peer?.stop()
  await dir?.cleanup()
})

const status = async (method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number, error?: string }> => {
  const res = await fetch(client.baseUrl + path, { method, headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json' }, body })
  const text = await res.text()
  return { status: res.status, error: (JSON.parse(text) as { error?: string })?.error }
}

describe('control API input', () => {
  it('a null (or non-object) JSON body is a 400 naming it', async () => {
    for (const body of ['null', '[1]', '7', '"x"']) {
      const r = await status('POST', '/v1/shards/rm', body)
      expect(r.status, body).toBe(400)
      expect(r.error).toMatch(/request body must be a JSON object/)
    }
  })

  it('timeoutMs=-5 (or not a number) is a 400 naming the parameter and its range', async () => {
    const cid = 'bafyreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
    for (const v of ['-5', 'abc', '1e9']) {
      const r = await status('GET', `/v1/dht/providers?cid=${cid}&timeoutMs=${v}`)
      expect(r.status, v).toBe(400)
      expect(r.error).toMatch(/"timeoutMs" must be an integer from 1 to 60000/)
    }
  })

  it(`idle sockets: at most ${MAX_SOCKETS} kept, each closed after ${HEADERS_TIMEOUT_MS} ms without a request`, async () => {
    const port = Number(new URL(client.baseUrl).port)
    const sockets: Socket[] = []
    let open = 0
    let closed = 0
    for (let i = 0; i < 200; i++) {
      const s = connect(port, '127.0.0.1')
      s.on('connect', () => { open++ })
      s.on('close', () => { closed++ })
      s.on('error', () => {})
      sockets.push(s)
    }
    await sleep(500)
    expect(open).toBe(200) // the kernel accepts them all; the server closes those over its cap
    expect(open - closed).toBeLessThanOrEqual(MAX_SOCKETS)
    await sleep(HEADERS_TIMEOUT_MS + 2500)
    expect(closed).toBe(200)
    // the API still answers
    expect(Array.isArray(await client.get('/v1/shards/ls'))).toBe(true)
    for (const s of sockets) s.destroy()
  }, 30_000)
})
