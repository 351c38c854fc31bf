import { ProgramError, type TopologyInfo } from './topology.js'

// A decoder-only transformer (GPT) over a character vocabulary, described by
// a few sizes instead of tfjs Layers JSON (tfjs-layers has no attention
// layer). The engine builds it from tfjs ops (node/train/gpt.ts); this file
// fixes its weights, their order and initialisers, so the pure initial state
// (init.ts) and the engine agree without tfjs.
//
// Inputs and labels are one-hot float32 rows [context * vocab]: the token
// embedding is a matmul of the one-hot tokens with the embedding table, so
// the embedding, its gradient and every batch input are kernels and layouts
// that already have element references and data claims.

export interface GptSpec {
  layers: number
  dModel: number
  heads: number
  /** hidden width of each block's MLP */
  mlp: number
  /** layer-norm epsilon */
  epsilon: number
}

/** The text a task trains on: the committed character vocabulary and the window length. */
export interface TextSpec {
  /** token i is vocab[i] (one UTF-16 code unit per token, all below 256) */
  vocab: string
  context: number
}

/** newline, then printable ASCII: the vocabulary of the packaged English corpora */
export const ASCII_VOCAB = '\n' + Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')

export const DEFAULT_GPT: GptSpec = { layers: 2, dModel: 64, heads: 4, mlp: 256, epsilon: 1e-5 }
export const DEFAULT_CONTEXT = 64
export const MAX_VOCAB = 256

/** How a GPT weight is initialised (ported bit for bit from tfjs's initialisers in init.ts). */
export type GptInit = 'GlorotUniform' | 'Embedding' | 'Ones' | 'Zeros'
export interface GptWeight { name: string, shape: number[], init: GptInit }

/** tfjs's Embedding default: RandomUniform(-0.05, 0.05). */
export const EMBEDDING_RANGE = 0.05

function posInt (v: unknown, what: string, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw new ProgramError(`${what} must be an integer in [1, ${max}], got ${JSON.stringify(v)}`)
  return v
}

export function validateTextSpec (t: unknown): TextSpec {
  if (typeof t !== 'object' || t === null || Array.isArray(t)) throw new ProgramError('dataset.text must be {vocab, context}')
  const o = t as Record<string, unknown>
  for (const k of Object.keys(o)) if (k !== 'vocab' && k !== 'context') throw new ProgramError(`unknown dataset.text field "${k}"`)
  if (typeof o.vocab !== 'string' || o.vocab.length < 2 || o.vocab.length > MAX_VOCAB) throw new ProgramError(`dataset.text.vocab must be a string of 2..${MAX_VOCAB} characters`)
  const seen = new Set<number>()
  for (let i = 0; i < o.vocab.length; i++) {
    const c = o.vocab.charCodeAt(i)
    if (c > 255) throw new ProgramError(`dataset.text.vocab: character ${i} (U+${c.toString(16)}) is not a single byte`)
    if (seen.has(c)) throw new ProgramError(`dataset.text.vocab: character ${JSON.stringify(o.vocab[i])} appears twice`)
    seen.add(c)
  }
  return { vocab: o.vocab, context: posInt(o.context, 'dataset.text.context', 1024) }
}

/** The weights in state order: token and position embeddings, per block (ln1, q, k, v, out, ln2, mlp), final norm, head. */
export function gptWeights (g: GptSpec, t: TextSpec): GptWeight[] {
  const d = g.dModel; const V = t.vocab.length
  const dense = (name: string, i: number, o: number): GptWeight[] => [{ name: `${name}/kernel`, shape: [i, o], init: 'GlorotUniform' }, { name: `${name}/bias`, shape: [o], init: 'Zeros' }]
  const norm = (name: string): GptWeight[] => [{ name: `${name}/gamma`, shape: [d], init: 'Ones' }, { name: `${name}/beta`, shape: [d], init: 'Zeros' }]
  const out: GptWeight[] = [
    { name: 'wte/embeddings', shape: [V, d], init: 'Embedding' },
    { name: 'wpe/embeddings', shape: [t.context, d], init: 'Embedding' }
  ]
  for (let l = 0; l < g.layers; l++) {
    const b = `block${l}`
    out.push(...norm(`${b}/ln1`), ...dense(`${b}/q`, d, d), ...dense(`${b}/k`, d, d), ...dense(`${b}/v`, d, d), ...dense(`${b}/proj`, d, d),
      ...norm(`${b}/ln2`), ...dense(`${b}/fc`, d, g.mlp), ...dense(`${b}/fc_out`, g.mlp, d))
  }
  out.push(...norm('ln_f'), ...dense('head', d, V))
  return out
}

/** Validates an untrusted GPT spec against the task's text; returns the spec and its shapes. */
export function validateGpt (spec: unknown, text: TextSpec, rowSize: number, classes: number): { spec: GptSpec, info: TopologyInfo } {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new ProgramError('model.gpt must be an object')
  const o = spec as Record<string, unknown>
  for (const k of Object.keys(o)) if (!['layers', 'dModel', 'heads', 'mlp', 'epsilon'].includes(k)) throw new ProgramError(`unknown model.gpt field "${k}"`)
  const layers = posInt(o.layers, 'model.gpt.layers', 48)
  const dModel = posInt(o.dModel, 'model.gpt.dModel', 4096)
  const heads = posInt(o.heads, 'model.gpt.heads', 256)
  const mlp = posInt(o.mlp, 'model.gpt.mlp', 16384)
  if (dModel % heads !== 0) throw new ProgramError(`model.gpt.dModel (${dModel}) must be a multiple of heads (${heads})`)
  const epsilon = o.epsilon
  if (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon <= 0 || epsilon >= 1) throw new ProgramError(`model.gpt.epsilon must be a number in (0, 1), got ${JSON.stringify(epsilon)}`)
  const g: GptSpec = { layers, dModel, heads, mlp, epsilon }
  const width = text.context * text.vocab.length
  if (rowSize !== width || classes !== width) throw new ProgramError(`shape mismatch: a GPT over context ${text.context} and ${text.vocab.length} tokens reads one-hot rows of ${width} values, but the dataset has rowSize ${rowSize} and classes ${classes}`)
  const weights = gptWeights(g, text)
  const params = weights.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1), 0)
  if (params > 50_000_000) throw new ProgramError(`model.gpt has ${params} parameters (max 50,000,000)`)
  const info: TopologyInfo = {
    inputShape: [width],
    outputShape: [width],
    weights: weights.map(w => ({ layer: w.name.slice(0, w.name.lastIndexOf('/')), name: w.name.slice(w.name.lastIndexOf('/') + 1), shape: [...w.shape] })),
    params,
    ...gptCost(g, text)
  }
  return { spec: g, info }
}

/**
 * Forward multiply-adds and values of one window: per block the q, k, v, proj and MLP
 * matmuls over T tokens and the T x T attention (scores and their weighted sum), then the head.
 */
function gptCost (g: GptSpec, t: TextSpec): { macs: number, activations: number } {
  const T = t.context; const d = g.dModel; const V = t.vocab.length
  const block = { macs: T * (4 * d * d + 2 * d * g.mlp) + 2 * T * T * d, activations: T * (8 * d + 2 * g.mlp) + 2 * g.heads * T * T }
  return { macs: g.layers * block.macs + T * d * V, activations: T * V + T * d + g.layers * block.activations + T * (d + V) }
}
