import { describe, expect, it } from 'vitest'
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { datasetRef, inputRows, labelRows, loadDatasetFor, textDataset } from '../../../node/train/dataset.js'
import { HELD_OUT, TEXT_CORPORA, oneHotWindows, textHash, tokenize, unigramBaseline, windowCount } from '../../../node/train/text-dataset.js'

// The packaged text corpus (Debian fortunes-min): content hash, deterministic
// character tokenisation with the program's vocabulary, windows and the
// held-out split, one-hot rows, and the unigram baseline.

const spec = { vocab: ASCII_VOCAB, context: 64 }

describe('text corpus fortunes-min', () => {
  it('loads, hashes and splits the real corpus deterministically', () => {
    const a = textDataset('fortunes-min', spec)
    const b = textDataset('fortunes-min', spec)
    expect(a.sha256).toBe(b.sha256)
    expect(a.sha256).toMatch(/^[0-9a-f]{64}$/)
    const t = a.text!
    expect(t.train.length + t.test.length).toBeGreaterThan(90_000)
    expect(t.test.length / (t.train.length + t.test.length)).toBeCloseTo(HELD_OUT, 3)
    expect(a.trainSize).toBe(windowCount(t.train.length, 64))
    expect(a.rowSize).toBe(64 * 96)
    expect(Math.max(...t.train)).toBeLessThan(96)
    // the program's reference reloads the same content; another context is another task
    expect(loadDatasetFor(datasetRef(a)).sha256).toBe(a.sha256)
    expect(() => loadDatasetFor({ ...datasetRef(a), trainSize: a.trainSize + 1 })).toThrow(/windows/)
  })

  it('tokenises with the vocabulary: tab is a space, other bytes outside it are dropped', () => {
    const ids = tokenize(new TextEncoder().encode('a\tb\bc\n~'), ASCII_VOCAB)
    expect([...ids].map(i => ASCII_VOCAB[i]).join('')).toBe('a bc\n~')
  })

  it('rows: window i holds tokens i*T .. i*T+T-1 one-hot, its labels the next token at each position', () => {
    const ds = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 5 })
    const toks = ds.text!.train
    const x = inputRows(ds, [3]); const y = labelRows(ds, [3])
    expect(x.length).toBe(5 * 96)
    for (let p = 0; p < 5; p++) {
      expect(x.subarray(p * 96, (p + 1) * 96).indexOf(1)).toBe(toks[15 + p])
      expect(y.subarray(p * 96, (p + 1) * 96).indexOf(1)).toBe(toks[16 + p])
    }
    expect(x.reduce((s, v) => s + v, 0)).toBe(5)
    const test = inputRows(ds, [0], 'test')
    expect(test.subarray(0, 96).indexOf(1)).toBe(ds.text!.test[0])
    expect(oneHotWindows(toks, { vocab: ASCII_VOCAB, context: 5 }, [0, 1], true).length).toBe(2 * 5 * 96)
  })

  it('the content hash covers names and bytes; a changed file is another dataset; a missing one is a clear error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'text-'))
    for (const f of TEXT_CORPORA['fortunes-min'].files) copyFileSync(join(TEXT_CORPORA['fortunes-min'].dir, f), join(dir, f))
    const ref = datasetRef(textDataset('fortunes-min', spec))
    expect(loadDatasetFor(ref, dir).sha256).toBe(ref.sha256)
    writeFileSync(join(dir, 'riddles'), 'changed')
    expect(() => loadDatasetFor(ref, dir)).toThrow(/windows|hash mismatch/)
    expect(() => textDataset('fortunes-min', spec, join(dir, 'none'))).toThrow(/apt-get install fortunes-min/)
    expect(textHash([{ name: 'a', bytes: Uint8Array.of(1) }])).not.toBe(textHash([{ name: 'b', bytes: Uint8Array.of(1) }]))
  })

  it('the unigram baseline is the held-out cross-entropy under the training frequencies', () => {
    // train: only token 0 (and add-one smoothing over 2 tokens); test labels: all token 0
    const train = new Uint8Array(98).fill(0)
    const test = new Uint8Array(9).fill(0)
    expect(unigramBaseline(train, test, 2, 4)).toBeCloseTo(-Math.log(99 / 100), 12)
    const ds = textDataset('fortunes-min', spec)
    const u = unigramBaseline(ds.text!.train, ds.text!.test, 96, 64)
    // English characters: about 3 nats per character under unigram frequencies
    expect(u).toBeGreaterThan(2.5); expect(u).toBeLessThan(3.5)
  })
})
