import type { Dataset } from './dataset.js'
import { GptNet } from './gpt.js'
import { tokenize, unigramBaseline } from './text-dataset.js'
import type { Trainer } from './trainer.js'

// What a text task reports after training: held-out loss against the
// corpus's unigram baseline, and a sample after a fixed prompt.

export interface TextReport { validationLoss: number, unigramBaseline: number, sample: string }

export const SAMPLE_PROMPT = 'The '
export const SAMPLE_LENGTH = 200

export function textReport (trainer: Trainer, ds: Dataset): TextReport {
  const t = ds.text
  if (t === undefined || !(trainer.net instanceof GptNet)) throw new Error('not a text task')
  const vocab = t.spec.vocab
  const prompt = [...tokenize(new TextEncoder().encode(SAMPLE_PROMPT), vocab)]
  const sample = trainer.net.sample(prompt, SAMPLE_LENGTH, trainer.program.seed).map(i => vocab[i]).join('')
  return {
    validationLoss: trainer.validationLoss(), unigramBaseline: unigramBaseline(t.train, t.test, vocab.length, t.spec.context), sample: SAMPLE_PROMPT + sample
  }
}
