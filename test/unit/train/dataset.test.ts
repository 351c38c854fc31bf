import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { DatasetError, encodeIdx, loadIdxDataset, normalizeRows, oneHot, parseIdx, syntheticDataset, datasetCommitment, datasetRef, datasetRowsRoot, loadDatasetFor } from '../../../node/train/dataset.js'
import { proveSlice, sliceBytes, verifySlice, valuesFromBytes } from '../../../protocols/commit/index.js'

const dirs: string[] = []
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

function writeDir (gz: boolean): string {
  const d = mkdtempSync(join(tmpdir(), 'ps-idx-')); dirs.push(d)
  const ds = syntheticDataset(3, 40, 10)
  const parts: Array<[string, Uint8Array]> = [
    ['train-images-idx3-ubyte', encodeIdx([40, 28, 28], ds.trainImages)], ['train-labels-idx1-ubyte', encodeIdx([40], ds.trainLabels)],
    ['t10k-images-idx3-ubyte', encodeIdx([10, 28, 28], ds.testImages)], ['t10k-labels-idx1-ubyte', encodeIdx([10], ds.testLabels)]
  ]
  for (const [n, b] of parts) writeFileSync(join(d, gz ? n + '.gz' : n), gz ? gzipSync(b) : b)
  return d
}

describe('datasets', () => {
  it('IDX round trip and bad input', () => {
    const b = encodeIdx([2, 3], Uint8Array.of(1, 2, 3, 4, 5, 6))
    expect(parseIdx(b)).toEqual({ dims: [2, 3], data: Uint8Array.of(1, 2, 3, 4, 5, 6) })
    expect(() => parseIdx(b.subarray(0, b.length - 1))).toThrow(/header says 6/)
    expect(() => parseIdx(Uint8Array.of(1, 2, 3, 4))).toThrow(DatasetError)
  })

  it('gz and raw directories load to the same content hash, equal to the synthetic one', () => {
    const a = loadIdxDataset(writeDir(true), 'x'); const b = loadIdxDataset(writeDir(false), 'x')
    expect(a.sha256).toBe(b.sha256)
    expect(a.sha256).toBe(syntheticDataset(3, 40, 10).sha256)
    expect(a.trainSize).toBe(40); expect(a.rowSize).toBe(784)
    expect(syntheticDataset(4, 40, 10).sha256).not.toBe(a.sha256)
  })

  it('missing files name the file and the package', () => {
    const d = mkdtempSync(join(tmpdir(), 'ps-empty-')); dirs.push(d)
    expect(() => loadIdxDataset(d)).toThrow(/train-images-idx3-ubyte\.gz .*missing/)
    expect(() => loadIdxDataset('/nonexistent/fashion')).toThrow(/does not exist/)
  })

  it('normalisation is x/255 in float32, labels one-hot; a row is provable against the dataset commitment', () => {
    const ds = syntheticDataset(1, 64, 8)
    const x = normalizeRows(ds.trainImages, 784, [5])
    expect(x[10]).toBe(Math.fround(ds.trainImages[5 * 784 + 10] / 255))
    // every byte value, in rows picked out of order
    const bytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 37) % 256)
    const every = normalizeRows(bytes, 256, [1, 0])
    every.forEach((v, i) => expect(v).toBe(Math.fround(bytes[(i < 256 ? 256 : 0) + (i % 256)] / 255)))
    const y = oneHot(ds.trainLabels, 10, [5, 6])
    expect(y.reduce((a, b) => a + b, 0)).toBe(2); expect(y[ds.trainLabels[5]]).toBe(1)
    const c = datasetCommitment(ds)
    const all = { shape: [64, 784], dtype: 'float32' as const, values: normalizeRows(ds.trainImages, 784, Array.from({ length: 64 }, (_, i) => i)) }
    const p = proveSlice(all, 'row', 5)
    expect(verifySlice(c.root, p)).toBe(true)
    expect(Array.from(valuesFromBytes('float32', sliceBytes(p)))).toEqual(Array.from(x))
    // the program's dataset.rowsRoot is that commitment's root
    const ref = datasetRef(ds, { rowsRoot: true })
    expect(ref.rowsRoot).toBe(Buffer.from(c.root).toString('hex'))
    expect(datasetRowsRoot(ds)).toBe(ref.rowsRoot)
    expect(() => loadDatasetFor({ ...ref, rowsRoot: '00'.repeat(32) }, undefined, { checkRowsRoot: true })).toThrow(/rowsRoot does not match/)
  })
})
