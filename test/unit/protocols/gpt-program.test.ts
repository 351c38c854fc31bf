import { describe, expect, it } from 'vitest'
import { ProgramError, newProgram, programHash, validateProgram, type DatasetRef, type TaskProgram } from '../../../protocols/program/index.js'
import { ASCII_VOCAB, DEFAULT_GPT, gptWeights } from '../../../protocols/program/gpt.js'

// The GPT program: its sizes, weights and the text dataset it must read,
// validated without tfjs; bad programs refused with a clear error.

const T = 64
const V = ASCII_VOCAB.length
const text: DatasetRef = { kind: 'text', name: 'fortunes-min', sha256: 'cd'.repeat(32), trainSize: 1000, testSize: 100, rowSize: T * V, classes: T * V, text: { vocab: ASCII_VOCAB, context: T } }
const base = (): TaskProgram => newProgram({ model: 'gpt', dataset: text, steps: 10 })
const mutate = (f: (p: any) => void): unknown => { const p = JSON.parse(JSON.stringify(base())); f(p); return p }

describe('GPT programs', () => {
  it('the default: 2 blocks of width 64 with 4 heads over 96 characters, weights in state order', () => {
    const p = validateProgram(base())
    expect(p.model).toEqual({ name: 'gpt', gpt: DEFAULT_GPT })
    expect(p.normalize).toBe('onehot')
    expect(V).toBe(96)
    const w = gptWeights(DEFAULT_GPT, { vocab: ASCII_VOCAB, context: T })
    expect(w.slice(0, 3).map(x => [x.name, x.shape])).toEqual([['wte/embeddings', [96, 64]], ['wpe/embeddings', [64, 64]], ['block0/ln1/gamma', [64]]])
    expect(w[w.length - 1]).toMatchObject({ name: 'head/bias', shape: [96], init: 'Zeros' })
    // per block: 2 norms (4), q k v proj (8), fc fc_out (4)
    expect(w.length).toBe(2 + 2 * 16 + 2 + 2)
    const perBlock = 4 * 64 + 4 * (64 * 64 + 64) + 64 * 256 + 256 + 256 * 64 + 64
    expect(p.info.params).toBe(96 * 64 + 64 * 64 + 2 * perBlock + 2 * 64 + 64 * 96 + 96)
    expect(p.info.inputShape).toEqual([T * V])
  })

  it('sizes are options; the vocabulary and context are part of the program (and of its hash)', () => {
    const p = newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 32, heads: 2, mlp: 64 }, dataset: text, steps: 10 })
    expect(validateProgram(p).info.weights.length).toBe(2 + 16 + 4)
    // a long context: its label rows are wider than any image dataset's classes
    const long = { ...text, rowSize: 1024 * V, classes: 1024 * V, text: { vocab: ASCII_VOCAB, context: 1024 } }
    expect(validateProgram(newProgram({ model: 'gpt', dataset: long, steps: 1, batchSize: 4 })).info.inputShape).toEqual([1024 * V])
    const other = mutate(q => { q.dataset.text.vocab = ASCII_VOCAB.slice(1) + '\n' }) as TaskProgram
    expect(programHash(other)).not.toBe(programHash(base()))
  })

  it('refuses bad GPT programs with clear errors', () => {
    expect(() => validateProgram(mutate(p => { p.model.gpt.heads = 5 }))).toThrow(/multiple of heads/)
    expect(() => validateProgram(mutate(p => { p.model.gpt.layers = 0 }))).toThrow(/model.gpt.layers/)
    expect(() => validateProgram(mutate(p => { p.model.gpt.epsilon = 0 }))).toThrow(/epsilon/)
    expect(() => validateProgram(mutate(p => { p.model.gpt.dropout = 0.1 }))).toThrow(/unknown model.gpt field/)
    expect(() => validateProgram(mutate(p => { p.model.name = 'mlp' }))).toThrow(/name: "gpt"/)
    expect(() => validateProgram(mutate(p => { p.dataset.rowSize = 784 }))).toThrow(/one-hot rows of 6144/)
    expect(() => validateProgram(mutate(p => { p.dataset.text.context = 32 }))).toThrow(/shape mismatch/)
    expect(() => validateProgram(mutate(p => { p.dataset.text.vocab = 'aa' }))).toThrow(/appears twice/)
    expect(() => validateProgram(mutate(p => { p.dataset.text.vocab = 'a\u0101' }))).toThrow(/not a single byte/)
    expect(() => validateProgram(mutate(p => { delete p.dataset.text }))).toThrow(/dataset.text/)
    expect(() => validateProgram(mutate(p => { p.normalize = 'div255' }))).toThrow(/normalize must be onehot/)
    expect(() => validateProgram(mutate(p => { p.dataset.kind = 'idx' }))).toThrow(/only for a text dataset/)
    expect(() => validateProgram(mutate(p => { p.model = { name: 'gpt', gpt: p.model.gpt, topology: { class_name: 'Sequential', config: { layers: [] } } } }))).toThrow(/no topology/)
    // an image model cannot read a text dataset, nor a GPT an image one
    expect(() => newProgram({ model: 'mlp', dataset: text, steps: 1 })).toThrow(/needs a GPT model/)
    const img: DatasetRef = { kind: 'synthetic', name: 's', sha256: 'ab'.repeat(32), trainSize: 100, testSize: 0, rowSize: 784, classes: 10, syntheticSeed: 1 }
    expect(() => newProgram({ model: 'gpt', dataset: img, steps: 1 })).toThrow(ProgramError)
  })
})
