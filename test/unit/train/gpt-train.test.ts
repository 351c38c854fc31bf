import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newProgram } from '../../../protocols/program/index.js'
import { ASCII_VOCAB } from '../../../protocols/program/gpt.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, textDataset, type Dataset } from '../../../node/train/dataset.js'
import { replayStep } from '../../../node/train/replay-many.js'
import { evaluateSaved, trainTask } from '../../../node/train/run.js'

// A small GPT trained verifiably on the real fortunes-min corpus: a proof is
// written and reproduced bit for bit by a second run, a verifier's replay of a
// step matches, resume gives the same proof; the run reports held-out loss,
// the unigram baseline and a sample; a saved model evaluates to that loss.

let ds: Dataset
const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'gpt-train-')); dirs.push(d); return d }
beforeAll(async () => {
  await initBackend('wasm')
  ds = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 16 })
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

describe('GPT training runs (wasm)', () => {
  it('verifiable run: proof reproduced by a second run and by resume, a replayed step matches; text report and saved-model loss agree', async () => {
    const p = newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 16, heads: 2, mlp: 32 }, dataset: datasetRef(ds), steps: 6, batchSize: 4, checkpointEvery: 2, learningRate: 0.01, seed: 5 })
    const a = tmp(); const b = tmp()
    const full = await trainTask({ program: p, outDir: a, dataset: ds, hashWorker: false })
    expect(full.proofWritten).toBe(true)
    const again = await trainTask({ program: p, outDir: b, dataset: ds, hashWorker: false, until: 3 })
    expect(again.proofWritten).toBe(false)
    const rest = await trainTask({ program: p, outDir: b, dataset: ds, hashWorker: false, resume: true })
    expect(rest.resumedFrom).toBe(2)
    expect(rest.proofRoot).toBe(full.proofRoot)
    expect(await replayStep({ proofDir: a, step: 4 })).toMatchObject({ step: 4, match: true })
    const t = full.text!
    expect(Number.isFinite(t.validationLoss)).toBe(true)
    // six steps from a random init: near ln(96) = 4.56, still a real loss
    expect(t.validationLoss).toBeGreaterThan(2); expect(t.validationLoss).toBeLessThan(5)
    expect(t.unigramBaseline).toBeGreaterThan(2.5)
    expect(t.sample.startsWith('The ')).toBe(true)
    expect(t.sample.length).toBe(4 + 200)
    expect([...t.sample].every(c => ASCII_VOCAB.includes(c))).toBe(true)
    const ev = await evaluateSaved({ modelDir: a })
    expect(ev.validationLoss).toBe(t.validationLoss)
    expect(Number.isNaN(ev.accuracy)).toBe(true)
    // what the submitter reports after collecting the model: the training's own report, sample included
    expect(ev.text).toEqual(t)
  }, 120_000)

  it('plain training learns: held-out loss falls below the unigram baseline', async () => {
    const p = newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 32, heads: 4, mlp: 64 }, dataset: datasetRef(ds), steps: 150, batchSize: 16, learningRate: 0.01, seed: 2 })
    const r = await trainTask({ program: p, outDir: tmp(), dataset: ds, verifiable: false })
    expect(r.text!.validationLoss).toBeLessThan(r.text!.unigramBaseline - 0.3)
  }, 180_000)
})
