import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { toHex } from '../../protocols/commit/merkle.js'
import { commitTensor, type TensorCommitment } from '../../protocols/commit/tensor.js'
import { fastTensorRoot } from './fast-commit.js'
import { Rng, deriveSeed } from '../../protocols/data/prng.js'
import type { DatasetRef } from '../../protocols/program/program.js'
import { MAX_IDX_FILE_BYTES } from '../../protocols/verification/fetch-limits.js'
import type { TextSpec } from '../../protocols/program/gpt.js'
import { loadTextCorpus, oneHotWindows, windowCount } from './text-dataset.js'

// Datasets in MNIST IDX format (Fashion-MNIST or any dir with the four files,
// gzipped or raw) and a seeded synthetic one for tests. The content hash is
// defined over the *decompressed* IDX bytes so gz and raw copies agree.

export const DEFAULT_FASHION_DIR = '/usr/share/datasets/fashion-mnist'
export const IDX_PARTS = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'] as const
// what a fetch of a dataset's file is bounded by too (protocols/verification/fetch-limits.ts)
const MAX_FILE = MAX_IDX_FILE_BYTES
const HASH_DOMAIN = 'proofswarm-dataset-v1\n'

export interface Dataset {
  name: string
  kind: 'idx' | 'synthetic' | 'text'
  rowSize: number
  classes: number
  trainSize: number
  testSize: number
  trainImages: Uint8Array
  trainLabels: Uint8Array
  testImages: Uint8Array
  testLabels: Uint8Array
  /** content hash (hex), see datasetHash */
  sha256: string
  syntheticSeed?: number
  dir?: string
  /** text datasets: the vocabulary and window, and the token ids (the image and label arrays are empty) */
  text?: { spec: TextSpec, train: Uint8Array, test: Uint8Array }
}

export class DatasetError extends Error {
  constructor (message: string) { super(message); this.name = 'DatasetError' }
}

export interface IdxArray { dims: number[], data: Uint8Array }

/** Parses an unsigned-byte IDX file (magic 0x0000 08 nd). */
export function parseIdx (bytes: Uint8Array, what = 'IDX file'): IdxArray {
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0) throw new DatasetError(`${what}: not an IDX file (bad magic)`)
  if (bytes[2] !== 0x08) throw new DatasetError(`${what}: only unsigned byte IDX data (type 0x08) is supported, got 0x${bytes[2].toString(16)}`)
  const nd = bytes[3]
  if (nd < 1 || nd > 4 || bytes.length < 4 + 4 * nd) throw new DatasetError(`${what}: bad dimension count ${nd}`)
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const dims: number[] = []
  for (let i = 0; i < nd; i++) dims.push(dv.getUint32(4 + 4 * i, false))
  const size = dims.reduce((a, b) => a * b, 1)
  const off = 4 + 4 * nd
  if (bytes.length !== off + size) throw new DatasetError(`${what}: header says ${size} values but the file holds ${bytes.length - off}`)
  return { dims, data: bytes.subarray(off) }
}

export function encodeIdx (dims: number[], data: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + 4 * dims.length + data.length)
  out[2] = 0x08; out[3] = dims.length
  const dv = new DataView(out.buffer)
  dims.forEach((d, i) => dv.setUint32(4 + 4 * i, d, false))
  out.set(data, 4 + 4 * dims.length)
  return out
}

/**
 * Dataset hash: sha256("proofswarm-dataset-v1\n" || for each part in
 * [train-images, train-labels, test-images, test-labels]: u64le(byte length) || raw IDX bytes).
 */
export function datasetHash (rawParts: readonly Uint8Array[]): string {
  const h = createHash('sha256').update(HASH_DOMAIN)
  for (const p of rawParts) {
    const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(p.length))
    h.update(len).update(p)
  }
  return h.digest('hex')
}

function readPart (dir: string, base: string): Uint8Array {
  for (const [name, gz] of [[base + '.gz', true], [base, false]] as const) {
    const f = join(dir, name)
    if (!existsSync(f)) continue
    const st = statSync(f)
    if (st.size > MAX_FILE) throw new DatasetError(`${f} is ${st.size} bytes (max ${MAX_FILE})`)
    const b = readFileSync(f)
    try {
      if (!gz) return b
      // gzip's trailer holds the uncompressed size (mod 2^32): one output chunk
      // of that size avoids concatenating chunks (halves the peak memory)
      const isize = b.length >= 4 ? b.readUInt32LE(b.length - 4) : 0
      const chunkSize = Math.min(Math.max(isize, 64 << 10), MAX_FILE)
      return gunzipSync(b, { maxOutputLength: MAX_FILE, chunkSize })
    } catch (e) {
      throw new DatasetError(`${f}: cannot decompress: ${(e as Error).message}`)
    }
  }
  const hint = dir === DEFAULT_FASHION_DIR ? ' (install it with `apt-get install dataset-fashion-mnist`)' : ''
  throw new DatasetError(`dataset file ${join(dir, base)}.gz (or ${base}) is missing in ${dir}${hint}`)
}

function fromRaw (name: string, kind: 'idx' | 'synthetic', raw: Uint8Array[], classes = 10): Dataset {
  const [ti, tl, vi, vl] = raw.map((b, i) => parseIdx(b, IDX_PARTS[i]))
  if (ti.dims.length < 2 || vi.dims.length < 2) throw new DatasetError('image files must have at least 2 dimensions')
  const rowSize = ti.dims.slice(1).reduce((a, b) => a * b, 1)
  if (vi.dims.slice(1).reduce((a, b) => a * b, 1) !== rowSize) throw new DatasetError('train and test images have different shapes')
  if (tl.dims.length !== 1 || tl.dims[0] !== ti.dims[0]) throw new DatasetError(`train labels (${tl.dims.join('x')}) do not match train images (${ti.dims[0]})`)
  if (vl.dims.length !== 1 || vl.dims[0] !== vi.dims[0]) throw new DatasetError(`test labels (${vl.dims.join('x')}) do not match test images (${vi.dims[0]})`)
  for (const l of [tl.data, vl.data]) for (let i = 0; i < l.length; i++) if (l[i] >= classes) throw new DatasetError(`label ${l[i]} at row ${i} is not below ${classes}`)
  return {
    name, kind, rowSize, classes,
    trainSize: ti.dims[0], testSize: vi.dims[0],
    trainImages: ti.data, trainLabels: tl.data, testImages: vi.data, testLabels: vl.data,
    sha256: datasetHash(raw)
  }
}

/** Loads the four IDX files (gz or raw) from a directory. */
export function loadIdxDataset (dir: string = DEFAULT_FASHION_DIR, name = 'fashion-mnist'): Dataset {
  if (!existsSync(dir)) {
    const hint = dir === DEFAULT_FASHION_DIR ? ' (install it with `apt-get install dataset-fashion-mnist`)' : ''
    throw new DatasetError(`dataset directory ${dir} does not exist${hint}`)
  }
  const ds = fromRaw(name, 'idx', IDX_PARTS.map(p => readPart(dir, p)))
  ds.dir = dir
  return ds
}

/**
 * Seeded synthetic 10-class dataset of 28x28 uint8 images: each class has a
 * random template; a sample is its template plus uniform noise in [-48, 48],
 * clamped. Learnable, tiny, and reproducible from (seed, sizes).
 */
export function syntheticDataset (seed: number, trainSize = 2048, testSize = 512): Dataset {
  if (!Number.isInteger(trainSize) || trainSize < 1 || trainSize > 1_000_000) throw new DatasetError(`synthetic trainSize ${trainSize} out of range [1, 1000000]`)
  if (!Number.isInteger(testSize) || testSize < 0 || testSize > 1_000_000) throw new DatasetError(`synthetic testSize ${testSize} out of range`)
  const rowSize = 784; const classes = 10
  const tr = new Rng(deriveSeed(seed, 0x74706c74))
  const templates = new Uint8Array(classes * rowSize)
  for (let i = 0; i < templates.length; i++) templates[i] = tr.below(256)
  const gen = (n: number, label: number): [Uint8Array, Uint8Array] => {
    const rng = new Rng(deriveSeed(seed, 0x73616d70, label))
    const img = new Uint8Array(n * rowSize); const lab = new Uint8Array(n)
    for (let s = 0; s < n; s++) {
      const c = rng.below(classes); lab[s] = c
      for (let j = 0; j < rowSize; j++) {
        const v = templates[c * rowSize + j] + rng.below(97) - 48
        img[s * rowSize + j] = v < 0 ? 0 : v > 255 ? 255 : v
      }
    }
    return [img, lab]
  }
  const [ti, tl] = gen(trainSize, 0); const [vi, vl] = gen(testSize, 1)
  const raw = [encodeIdx([trainSize, 28, 28], ti), encodeIdx([trainSize], tl), encodeIdx([testSize, 28, 28], vi), encodeIdx([testSize], vl)]
  const ds = fromRaw('synthetic', 'synthetic', raw)
  ds.syntheticSeed = seed
  return ds
}

/** A packaged text corpus tokenised with `spec` (text-dataset.ts): rows are one-hot windows. */
export function textDataset (name: string, spec: TextSpec, dir?: string): Dataset {
  const c = loadTextCorpus(name, spec.vocab, dir)
  const width = spec.context * spec.vocab.length
  const trainSize = windowCount(c.train.length, spec.context)
  if (trainSize < 1) throw new DatasetError(`text corpus ${name} holds no window of ${spec.context + 1} tokens`)
  const empty = new Uint8Array(0)
  return {
    name, kind: 'text', rowSize: width, classes: width, trainSize, testSize: windowCount(c.test.length, spec.context),
    trainImages: empty, trainLabels: empty, testImages: empty, testLabels: empty,
    sha256: c.sha256, dir: c.dir, text: { spec, train: c.train, test: c.test }
  }
}

/** Normalised float32 input rows (x) of the given rows of the training or test split: x/255, or one-hot tokens. */
export function inputRows (ds: Dataset, rows: ArrayLike<number>, split: 'train' | 'test' = 'train'): Float32Array {
  if (ds.text !== undefined) return oneHotWindows(split === 'train' ? ds.text.train : ds.text.test, ds.text.spec, rows, false)
  return normalizeRows(split === 'train' ? ds.trainImages : ds.testImages, ds.rowSize, rows)
}

/** One-hot float32 label rows (y) of the given rows: the class, or the next token at every position. */
export function labelRows (ds: Dataset, rows: ArrayLike<number>, split: 'train' | 'test' = 'train'): Float32Array {
  if (ds.text !== undefined) return oneHotWindows(split === 'train' ? ds.text.train : ds.text.test, ds.text.spec, rows, true)
  return oneHot(split === 'train' ? ds.trainLabels : ds.testLabels, ds.classes, rows)
}

export function datasetRef (ds: Dataset, opts: { rowsRoot?: boolean } = {}): DatasetRef {
  const ref: DatasetRef = {
    kind: ds.kind, name: ds.name, sha256: ds.sha256, trainSize: ds.trainSize, testSize: ds.testSize, rowSize: ds.rowSize, classes: ds.classes
  }
  if (ds.kind === 'synthetic') ref.syntheticSeed = ds.syntheticSeed
  if (ds.text !== undefined) ref.text = { vocab: ds.text.spec.vocab, context: ds.text.spec.context }
  if (opts.rowsRoot === true) ref.rowsRoot = datasetRowsRoot(ds)
  return ref
}

/** Root (hex) of datasetCommitment, computed with the fast implementation (~1.3 s for Fashion-MNIST). */
export function datasetRowsRoot (ds: Dataset): string {
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  return toHex(fastTensorRoot({ shape: [ds.trainSize, ds.rowSize], dtype: 'float32', values: inputRows(ds, all) }))
}

/** Loads the dataset a program refers to and checks its hash. */
export function loadDatasetFor (ref: DatasetRef, dir?: string, opts: { checkRowsRoot?: boolean } = {}): Dataset {
  const ds = ref.kind === 'synthetic'
    ? syntheticDataset(ref.syntheticSeed ?? 0, ref.trainSize, ref.testSize)
    : ref.kind === 'text'
      ? textDataset(ref.name, textSpecOf(ref), dir)
      : loadIdxDataset(dir ?? DEFAULT_FASHION_DIR, ref.name)
  if (ds.kind === 'text' && (ds.trainSize !== ref.trainSize || ds.testSize !== ref.testSize)) throw new DatasetError(`text dataset ${ref.name} gives ${ds.trainSize}/${ds.testSize} train/test windows, the task expects ${ref.trainSize}/${ref.testSize}`)
  if (ds.sha256 !== ref.sha256) throw new DatasetError(`dataset content hash mismatch: the task expects ${ref.sha256} but ${ds.dir ?? 'the synthetic generator'} gives ${ds.sha256}`)
  if (opts.checkRowsRoot === true && ref.rowsRoot !== undefined && datasetRowsRoot(ds) !== ref.rowsRoot) throw new DatasetError('dataset.rowsRoot does not match the dataset content')
  return ds
}

function textSpecOf (ref: DatasetRef): TextSpec {
  if (ref.text === undefined) throw new DatasetError(`text dataset ${ref.name} has no vocabulary (dataset.text)`)
  return ref.text
}

/** float32(b / 255) for every byte b: the same values as dividing each pixel, without a division per pixel */
const BYTE_OVER_255 = Float32Array.from({ length: 256 }, (_, b) => b / 255)

/** Normalised float32 rows x/255 for the given row indices (batch tensor bytes). */
export function normalizeRows (images: Uint8Array, rowSize: number, rows: ArrayLike<number>): Float32Array {
  const out = new Float32Array(rows.length * rowSize)
  for (let i = 0; i < rows.length; i++) {
    const src = rows[i] * rowSize
    for (let j = 0; j < rowSize; j++) out[i * rowSize + j] = BYTE_OVER_255[images[src + j]]
  }
  return out
}

export function oneHot (labels: Uint8Array, classes: number, rows: ArrayLike<number>): Float32Array {
  const out = new Float32Array(rows.length * classes)
  for (let i = 0; i < rows.length; i++) out[i * classes + labels[rows[i]]] = 1
  return out
}

/**
 * Commitment over the normalised training rows as a float32 tensor
 * [trainSize, rowSize]: a single sample row can later be proven on chain
 * with proveSlice(..., 'row', i).
 */
export function datasetCommitment (ds: Dataset): TensorCommitment {
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  return commitTensor({ shape: [ds.trainSize, ds.rowSize], dtype: 'float32', values: inputRows(ds, all) })
}
