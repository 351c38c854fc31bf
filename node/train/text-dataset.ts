import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { TextSpec } from '../../protocols/program/gpt.js'

// Packaged English text corpora for character-level language models. The
// content hash covers the raw bytes of the corpus files (in a fixed order);
// tokenisation is fixed by the program's vocabulary: a tab reads as a space,
// any other byte outside the vocabulary is dropped. The last tenth of the
// token stream is held out. Rows are windows of context + 1 tokens, stepping
// by `context`: inputs are the first `context`, labels the last.

export interface TextCorpus {
  /** Debian package that installs it */
  pkg: string
  dir: string
  files: string[]
}

export const TEXT_CORPORA: Record<string, TextCorpus> = {
  'fortunes-min': { pkg: 'fortunes-min', dir: '/usr/share/games/fortunes', files: ['fortunes', 'literature', 'riddles'] }
}

const HASH_DOMAIN = 'proofswarm-text-v1\n'
const MAX_FILE = 64 << 20
/** share of the token stream held out for validation */
export const HELD_OUT = 0.1

export class TextDatasetError extends Error {
  constructor (message: string) { super(message); this.name = 'TextDatasetError' }
}

export interface TextData {
  name: string
  sha256: string
  /** token ids of the training and held-out parts */
  train: Uint8Array
  test: Uint8Array
  dir: string
}

/** sha256("proofswarm-text-v1\n" || for each file: u64le(name length) || name || u64le(byte length) || bytes). */
export function textHash (files: ReadonlyArray<{ name: string, bytes: Uint8Array }>): string {
  const h = createHash('sha256').update(HASH_DOMAIN)
  const len = (n: number): Buffer => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b }
  for (const f of files) h.update(len(Buffer.byteLength(f.name))).update(f.name).update(len(f.bytes.length)).update(f.bytes)
  return h.digest('hex')
}

/** Token ids of `bytes` under `vocab` (tab → space, bytes outside the vocabulary dropped). */
export function tokenize (bytes: Uint8Array, vocab: string): Uint8Array {
  const id = new Int16Array(256).fill(-1)
  for (let i = 0; i < vocab.length; i++) id[vocab.charCodeAt(i)] = i
  const out = new Uint8Array(bytes.length)
  let n = 0
  for (const b0 of bytes) {
    const b = b0 === 9 ? 32 : b0
    if (id[b] >= 0) out[n++] = id[b]
  }
  return out.slice(0, n)
}

/** Windows of context + 1 tokens stepping by context: how many a token stream holds. */
export function windowCount (tokens: number, context: number): number {
  return tokens <= context ? 0 : Math.floor((tokens - 1) / context)
}

export function loadTextCorpus (name: string, vocab: string, dir?: string): TextData {
  const c = TEXT_CORPORA[name]
  if (c === undefined) throw new TextDatasetError(`unknown text corpus "${name}" (known: ${Object.keys(TEXT_CORPORA).join(', ')})`)
  const d = dir ?? c.dir
  const files = c.files.map(f => {
    const path = join(d, f)
    if (!existsSync(path)) throw new TextDatasetError(`text corpus file ${path} is missing (install it with \`apt-get install ${c.pkg}\`)`)
    if (statSync(path).size > MAX_FILE) throw new TextDatasetError(`${path} is larger than ${MAX_FILE} bytes`)
    return { name: f, bytes: new Uint8Array(readFileSync(path)) }
  })
  const all = new Uint8Array(files.reduce((n, f) => n + f.bytes.length, 0))
  let off = 0
  for (const f of files) { all.set(f.bytes, off); off += f.bytes.length }
  const tokens = tokenize(all, vocab)
  const cut = Math.floor(tokens.length * (1 - HELD_OUT))
  return { name, sha256: textHash(files), train: tokens.subarray(0, cut), test: tokens.subarray(cut), dir: d }
}

/** One-hot rows [rows.length, context * V] of the inputs (labels: shifted by one token) of windows `rows`. */
export function oneHotWindows (tokens: Uint8Array, t: TextSpec, rows: ArrayLike<number>, labels: boolean): Float32Array {
  const V = t.vocab.length; const T = t.context
  const out = new Float32Array(rows.length * T * V)
  const shift = labels ? 1 : 0
  for (let i = 0; i < rows.length; i++) {
    const start = rows[i] * T + shift
    for (let p = 0; p < T; p++) out[(i * T + p) * V + tokens[start + p]] = 1
  }
  return out
}

/** Cross-entropy (nats/token) of the held-out labels under the training tokens' unigram frequencies (add-one smoothed): the baseline a language model must beat. */
export function unigramBaseline (train: Uint8Array, test: Uint8Array, V: number, context: number): number {
  const counts = new Float64Array(V).fill(1)
  for (const t of train) counts[t]++
  const total = counts.reduce((a, b) => a + b, 0)
  const n = windowCount(test.length, context)
  let s = 0; let k = 0
  for (let w = 0; w < n; w++) for (let p = 1; p <= context; p++) { s -= Math.log(counts[test[w * context + p]] / total); k++ }
  return k === 0 ? NaN : s / k
}
