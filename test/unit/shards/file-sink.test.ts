import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { InOrderHash, openPartFile, writeAt, writeChunksAt } from '../../../node/shards/file-sink.js'
import { chunksMatch, cidOf } from '../../../protocols/shards/index.js'
import { tempDir } from '../../helpers/procs.js'

// fetchToFile's helpers: the content sha256 with blocks arriving out of order
// (some read back from the file), and part-file adoption.

let dir: { path: string, cleanup: () => Promise<void> }
beforeAll(async () => { dir = await tempDir('proofswarm-file-sink-') })
afterAll(async () => { await dir?.cleanup() })

describe('InOrderHash', () => {
  it('gives the content sha256 whatever the arrival order, reading back blocks it could not keep', async () => {
    const sizes = [1000, 1000, 1000, 1000, 1000, 1000, 17]
    const data = randomBytes(sizes.reduce((a, b) => a + b, 0))
    const offsets = sizes.map((_, i) => i * 1000)
    const block = (i: number): Uint8Array => data.subarray(offsets[i], offsets[i] + sizes[i])
    const { tmp, fh } = await openPartFile(join(dir.path, 'h.bin'))
    try {
      await writeAt(fh, 0, data)
      for (const order of [[0, 1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1, 0], [3, 0, 6, 1, 5, 2, 4]]) {
        const h = new InOrderHash(sizes, 2500) // room for 2 pending blocks: the rest is read back
        for (const i of order) h.add(i, block(i))
        h.add(2, block(2)) // a duplicate is ignored
        expect(await h.finish(fh, offsets)).toBe(createHash('sha256').update(data).digest('hex'))
      }
    } finally { await fh.close() }
    expect(tmp).toBe(join(dir.path, `h.bin.part-${process.pid}`))
  })
})

describe('openPartFile', () => {
  it('starts fresh with no part file, resumes its own, adopts a dead process\'s and leaves a live one\'s', async () => {
    const path = join(dir.path, 'p.bin')
    const fresh = await openPartFile(path)
    expect(fresh.resumed).toBe(false)
    await fresh.fh.close()
    const own = await openPartFile(path)
    expect(own.resumed).toBe(true)
    await own.fh.close()
    await writeFile(own.tmp.replace(`-${process.pid}`, '-999999999'), 'x') // beyond pid_max: no such process
    await writeFile(`${path}.part-${process.ppid}`, 'live')
    const again = await openPartFile(path)
    expect(again.resumed).toBe(true)
    await again.fh.close()
    const left = (await readdir(dir.path)).filter(n => n.startsWith('p.bin.part-')).sort()
    expect(left).toEqual([`p.bin.part-${process.pid}`, `p.bin.part-${process.ppid}`].sort())
  })
})

describe('blocks as the chunks they arrived in', () => {
  it('writeChunksAt puts them at their offset, InOrderHash and chunksMatch hash them as one block', async () => {
    const data = randomBytes(3000)
    const chunks = [data.subarray(0, 7), data.subarray(7, 7), data.subarray(7, 2000), data.subarray(2000)]
    const path = join(dir.path, 'chunks.bin')
    const { fh } = await openPartFile(path)
    try {
      await writeAt(fh, 0, randomBytes(5000))
      await writeChunksAt(fh, 1000, chunks)
      const h = new InOrderHash([1000, 3000, 1000], 10_000)
      h.add(1, chunks) // out of order: kept as chunks until block 0 comes
      h.add(0, (await readFile(`${path}.part-${process.pid}`)).subarray(0, 1000))
      const file = await readFile(`${path}.part-${process.pid}`)
      expect(Buffer.compare(file.subarray(1000, 4000), data)).toBe(0)
      expect(await h.finish(fh, [0, 1000, 4000])).toBe(createHash('sha256').update(file).digest('hex'))
    } finally { await fh.close() }
    expect(chunksMatch(cidOf(data), chunks)).toBe(true)
    const bad = [...chunks.slice(0, 3), Uint8Array.from(chunks[3], (b, i) => i === 5 ? b ^ 1 : b)]
    expect(chunksMatch(cidOf(data), bad)).toBe(false)
  })
})
