import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Level } from 'level'

// One LevelDB per peer (data-dir/db). Areas of the node use sublevels so
// keys never collide: meta (identity, roles), traces, tasks, shards, ...
export type PeerDb = Level<string, Uint8Array>

export async function openPeerDb (dataDir: string): Promise<PeerDb> {
  await mkdir(dataDir, { recursive: true })
  const db = new Level<string, Uint8Array>(join(dataDir, 'db'), { valueEncoding: 'view' })
  try {
    await db.open()
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message
    if (/lock/i.test(cause)) {
      throw new Error(`the data dir ${dataDir} is in use by another proofswarm process (LevelDB lock held); stop it or pick another --data-dir`)
    }
    throw new Error(`cannot open the peer database in ${dataDir}: ${cause}`)
  }
  return db
}

export function sublevel (db: PeerDb, name: string): Level<string, Uint8Array> {
  return db.sublevel<string, Uint8Array>(name, { valueEncoding: 'view' }) as unknown as Level<string, Uint8Array>
}

const enc = new TextEncoder()
const dec = new TextDecoder()

export async function getJson<T> (db: Level<string, Uint8Array>, key: string): Promise<T | undefined> {
  const v = await db.get(key)
  return v == null ? undefined : JSON.parse(dec.decode(v)) as T
}

export async function putJson (db: Level<string, Uint8Array>, key: string, value: unknown): Promise<void> {
  await db.put(key, enc.encode(JSON.stringify(value)))
}
