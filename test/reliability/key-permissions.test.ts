import { spawnSync } from 'node:child_process'
import { chmod, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadOrCreateIdentity } from '../../node/identity.js'
import { openPeerDb, sublevel } from '../../node/storage/db.js'
import { tempDir } from '../helpers/procs.js'

// The peer's private key lives in its LevelDB: the data dir must be 0700 and
// the database files 0600, checked and fixed at every start (like ssh), with a
// warning. Probed as another local user (`nobody`) when the tests run as root.

const dirs: Array<{ path: string, cleanup: () => Promise<void> }> = []
afterEach(async () => { for (const d of dirs.splice(0)) await d.cleanup() })

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777
const asNobody = (cmd: string[]): number | null => spawnSync('runuser', ['-u', 'nobody', '--', ...cmd], { stdio: 'ignore' }).status

describe('key material permissions', () => {
  it('a fresh data dir is 0700 and its database files 0600', async () => {
    const d = await tempDir('ps-perm-'); dirs.push(d)
    const dataDir = join(d.path, 'peer')
    const db = await openPeerDb(dataDir)
    await loadOrCreateIdentity(sublevel(db, 'meta'))
    await db.close()
    expect(await mode(dataDir)).toBe(0o700)
    expect(await mode(join(dataDir, 'db'))).toBe(0o700)
    for (const f of await readdir(join(dataDir, 'db'))) {
      const st = await stat(join(dataDir, 'db', f))
      if (st.isFile()) expect(st.mode & 0o077).toBe(0)
    }
  })

  it('a data dir left readable is fixed at start, with a warning; another user cannot read the key', async () => {
    const d = await tempDir('ps-perm-'); dirs.push(d)
    const dataDir = join(d.path, 'peer')
    // a careless operator's data dir, from an earlier version or a copy
    let db = await openPeerDb(dataDir)
    await loadOrCreateIdentity(sublevel(db, 'meta'))
    await db.close()
    await chmod(dataDir, 0o755); await chmod(join(dataDir, 'db'), 0o755)
    for (const f of await readdir(join(dataDir, 'db'))) await chmod(join(dataDir, 'db', f), 0o644)
    await chmod(d.path, 0o755)
    const warnings: string[] = []
    db = await openPeerDb(dataDir, m => warnings.push(m))
    await db.close()
    expect(warnings.some(w => w.includes('readable by other users') && w.includes('0700'))).toBe(true)
    expect(await mode(dataDir)).toBe(0o700)
    for (const f of await readdir(join(dataDir, 'db'))) expect((await stat(join(dataDir, 'db', f))).mode & 0o077).toBe(0)
    if (process.getuid?.() === 0 && spawnSync('runuser', ['--help'], { stdio: 'ignore' }).status === 0) {
      const files = (await readdir(join(dataDir, 'db'))).filter(f => f.endsWith('.log') || f.endsWith('.ldb'))
      expect(files.length).toBeGreaterThan(0)
      for (const f of files) expect(asNobody(['cat', join(dataDir, 'db', f)])).not.toBe(0)
      expect(asNobody(['ls', dataDir])).not.toBe(0)
    }
  })
})
