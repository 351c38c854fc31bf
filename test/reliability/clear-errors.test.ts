import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, tempDir } from '../helpers/procs.js'

// Operator mistakes get an error that says what was wrong and what to do,
// at once: a key path that does not exist (it was taken as a secret phrase),
// a chain URL that is not ws:// (it was dialled), a bootstrap address whose
// /p2p/ part is not a peer id (it was retried for 9.5 s with a multibase error).

let dir: { path: string, cleanup: () => Promise<void> }
const BOOT = '/ip4/127.0.0.1/tcp/9/p2p/12D3KooWPE3HJM4CiSoiL637wDsN57VwWEDxiGBbnAiTW4Uiq5o7'

beforeAll(async () => { dir = await tempDir('ps-clear-errors-') })
afterAll(async () => { await dir?.cleanup() })

async function join_ (name: string, extra: string[]): Promise<{ code: number | null, stderr: string, ms: number }> {
  const t0 = Date.now()
  const r = await runCli(['join', '--data-dir', join(dir.path, name), '--listen', '/ip4/127.0.0.1/tcp/0', ...extra], 20_000)
  return { code: r.code, stderr: r.stderr, ms: Date.now() - t0 }
}

describe('clear errors for operator mistakes', () => {
  it('--account with a key file that does not exist', async () => {
    const r = await join_('a', ['--bootstrap', BOOT, '--chain', 'ws://127.0.0.1:9', '--account', '/nonexistent/key'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/--account \/nonexistent\/key: no such key file/)
    expect(r.stderr).toMatch(/give a secret URI/)
  })

  it('--chain http//x', async () => {
    const r = await join_('b', ['--bootstrap', BOOT, '--chain', 'http//x', '--account', '//Alice'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/--chain http\/\/x is not a WebSocket URL: give ws:\/\/host:port/)
  })

  it('a bootstrap address whose /p2p/ part is not a peer id: refused at once', async () => {
    const r = await join_('c', ['--bootstrap', '/ip4/127.0.0.1/tcp/4001/p2p/notapeerid'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/"notapeerid" is not a peer id .*copy the full address printed by "proofswarm bootstrap"/)
    expect(r.stderr).not.toMatch(/multibase|attempt \d/)
    expect(r.ms).toBeLessThan(5000)
  })
})
