import { afterAll, describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toHex } from '../../../protocols/commit/merkle.js'
import { encodeChunks } from '../../../protocols/erasure/coder.js'
import { chunkLeaf, chunkRootOf } from '../../../protocols/erasure/index.js'

// the compiled pool, so that it runs real worker threads (the .ts sources code inline)
const { CodeAhead, CodingPool } = await import('../../../dist/node/erasure/coding-pool.js' as string) as typeof import('../../../node/erasure/coding-pool.js')

const root = mkdtempSync(join(tmpdir(), 'coding-pool-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function checkpoint (runDir: string, step: number, bytes: number, manifest = true): { dir: string, data: Uint8Array } {
  const dir = join(runDir, 'checkpoints', `step-${String(step).padStart(8, '0')}`)
  mkdirSync(dir, { recursive: true })
  const data = new Uint8Array(bytes).map((_, i) => (i * 31 + step * 7) & 0xff)
  writeFileSync(join(dir, 'state.bin'), data)
  if (manifest) writeFileSync(join(dir, 'manifest.json'), '{}')
  return { dir, data }
}
const expectedRoot = (data: Uint8Array): string => toHex(chunkRootOf(encodeChunks(data).chunks.map(chunkLeaf)))

describe('erasure coding in worker threads', () => {
  it('codes checkpoints in parallel workers, with the same chunk roots as the coder', async () => {
    const pool = new CodingPool(2)
    expect(pool.mode).toBe('worker')
    expect(pool.threads).toBe(2)
    const run = join(root, 'run1')
    const cks = [0, 5, 10].map(s => ({ step: s, ...checkpoint(run, s, 40_000 + s * 1000) }))
    const out = await Promise.all(cks.map(async c => await pool.code(c.dir, c.step)))
    for (const [i, c] of cks.entries()) {
      expect(out[i].step).toBe(c.step)
      expect(out[i].dataBytes).toBe(c.data.length)
      expect(toHex(out[i].chunkRoot)).toBe(expectedRoot(c.data))
      expect(existsSync(join(c.dir, 'chunks.bin'))).toBe(true)
    }
    // a checkpoint it cannot read is a clear error, and the pool keeps working
    await expect(pool.code(join(run, 'nope'), 3)).rejects.toThrow(/erasure coding failed/)
    expect(toHex((await pool.code(cks[0].dir, 0)).chunkRoot)).toBe(expectedRoot(cks[0].data))
    await pool.close()
    await expect(pool.code(cks[0].dir, 0)).rejects.toThrow(/closed/)
  }, 30_000)

  it('codes ahead only the checkpoints whose manifest is written (the state file is complete)', async () => {
    const pool = new CodingPool(1)
    const run = join(root, 'run2')
    const done = checkpoint(run, 0, 30_000)
    const partial = checkpoint(run, 4, 30_000, false)
    const ahead = new CodeAhead(run, pool)
    ahead.poll()
    await ahead.drained()
    await ahead.stop()
    expect(ahead.coded).toBe(1)
    expect(existsSync(join(done.dir, 'chunks.json'))).toBe(true)
    expect(existsSync(join(partial.dir, 'chunks.json'))).toBe(false)
    // once written, a later poll picks it up
    const again = new CodeAhead(run, pool)
    writeFileSync(join(partial.dir, 'manifest.json'), '{}')
    again.poll()
    await again.drained()
    await again.stop()
    expect(again.coded).toBe(2)
    expect(existsSync(join(partial.dir, 'chunks.json'))).toBe(true)
    await pool.close()
  }, 30_000)
})
