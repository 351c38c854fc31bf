import { chmod, mkdir, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Level } from 'level'

// One LevelDB per peer (data-dir/db). Areas of the node use sublevels so
// keys never collide: meta (identity, roles), traces, tasks, shards, ...
export type PeerDb = Level<string, Uint8Array>

/**
 * The data dir holds the peer's private key (in LevelDB): like ~/.ssh it is
 * 0700 and its database files 0600. A looser mode found at start is fixed, and
 * `warn` says so (another local user may already have read the key).
 */
export async function securePeerDir (dataDir: string, warn?: (msg: string) => void): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  for (const dir of [dataDir, join(dataDir, 'db')]) {
    let st
    try { st = await stat(dir) } catch { continue }
    if ((st.mode & 0o077) !== 0) {
      await chmod(dir, 0o700)
      warn?.(`${dir} was readable by other users (mode ${(st.mode & 0o777).toString(8)}); set to 0700. It holds this peer's private key: if other users had access, consider a new identity`)
    }
  }
  let files: string[] = []
  try { files = await readdir(join(dataDir, 'db')) } catch { return }
  for (const f of files) {
    const p = join(dataDir, 'db', f)
    const st = await stat(p).catch(() => undefined)
    // LevelDB's compaction may delete a table file between the listing and here (seen on a restart)
    if (st?.isFile() === true && (st.mode & 0o077) !== 0) await chmod(p, 0o600).catch(ignoreGone)
  }
}

function ignoreGone (err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err
}

export async function openPeerDb (dataDir: string, warn?: (msg: string) => void): Promise<PeerDb> {
  await securePeerDir(dataDir, warn)
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
  // files LevelDB just created follow the umask (often 0644): tighten them too
  await securePeerDir(dataDir)
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
