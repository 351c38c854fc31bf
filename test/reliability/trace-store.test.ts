import { join } from 'node:path'
import { Level } from 'level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TraceEntry } from '../../actors/trace.js'
import { TraceStore } from '../../node/traces/store.js'
import { tempDir } from '../helpers/procs.js'

// `proofswarm trace` without --since showed the oldest 1,000 entries, and the
// retention count restarted at 0 with the peer, so the store grew by the
// whole retention at every restart. Now the newest entries come first-class,
// and retention counts what is stored (real LevelDB, reopened).

const MAX = 100
let dir: { path: string, cleanup: () => Promise<void> }
let seq = 0
const entry = (time: number): TraceEntry => ({ seq: seq++, time, peer: 'p', actorId: 'a', role: 'solver', kind: 'event', event: `e${seq}` })

async function open (): Promise<{ db: Level<string, Uint8Array>, store: TraceStore }> {
  const db = new Level<string, Uint8Array>(join(dir.path, 'db'), { valueEncoding: 'view' })
  await db.open()
  return { db, store: new TraceStore(db, MAX) }
}

async function stored (db: Level<string, Uint8Array>): Promise<number> {
  let n = 0
  for await (const _k of db.keys()) n++
  return n
}

beforeAll(async () => { dir = await tempDir('ps-trace-store-') })
afterAll(async () => { await dir?.cleanup() })

describe('trace store', () => {
  it('without since: the newest entries, in time order', async () => {
    const { db, store } = await open()
    for (let i = 0; i < 50; i++) store.append(entry(1_000 + i))
    const newest = await store.query({ limit: 10 })
    expect(newest.map(e => e.time)).toEqual([1040, 1041, 1042, 1043, 1044, 1045, 1046, 1047, 1048, 1049])
    // with since: from there on, oldest first
    expect((await store.query({ since: 1_010, limit: 3 })).map(e => e.time)).toEqual([1010, 1011, 1012])
    await store.close()
    await db.close()
  })

  it('retention counts the entries already stored: restarts do not let the store grow past it', async () => {
    for (let restart = 0; restart < 4; restart++) {
      const { db, store } = await open()
      for (let i = 0; i < MAX; i++) store.append(entry(10_000 + restart * 1000 + i))
      await store.close()
      expect(await stored(db), `after restart ${restart}`).toBeLessThanOrEqual(MAX)
      await db.close()
    }
  })
})
