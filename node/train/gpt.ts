import * as tf from '@tensorflow/tfjs'
import { deriveSeed, Rng } from '../../protocols/data/prng.js'
import { INIT_DOMAIN } from '../../protocols/data/order.js'
import { EMBEDDING_RANGE, gptWeights, type GptSpec, type GptWeight, type TextSpec } from '../../protocols/program/gpt.js'
import type { StateVar } from './net.js'

// A decoder-only transformer written with tfjs ops: every op was chosen so
// that the kernels a training step emits on the pinned wasm runtime have
// element references (protocols/program/admissible.ts lists them, and a test
// tapes real steps against that list):
// - token embedding: one-hot tokens [B*T, V] times the table (a MatMul, its
//   gradient a transposed MatMul), position embedding: a broadcast Add;
// - layer norm from Mean, Sub, Square, Add, Sqrt, RealDiv, Multiply;
// - attention: BatchMatMul with transposes, Transpose for the heads, a
//   constant causal mask added (-1e9 above the diagonal), and a softmax
//   (Max, Sub, Exp, Sum, RealDiv) whose gradient is written out
//   (p * (dy - sum(dy * p))) so no Max gradient (Equal, Cast) runs;
// - GELU (tanh form) with tanh(u) = 1 - 2 / (exp(2u) + 1) from Exp and
//   RealDiv, and its derivative written out from the saved tanh.

const GELU_C = Math.sqrt(2 / Math.PI)
const GELU_A = 0.044715
const MASKED = -1e9

let instances = 0

function initial (w: GptWeight, seed: number): tf.Tensor {
  if (w.init === 'Ones') return tf.ones(w.shape)
  if (w.init === 'Zeros') return tf.zeros(w.shape)
  if (w.init === 'Embedding') return tf.initializers.randomUniform({ minval: -EMBEDDING_RANGE, maxval: EMBEDDING_RANGE, seed }).apply(w.shape)
  return tf.initializers.glorotUniform({ seed }).apply(w.shape)
}

const softmax = tf.customGrad(((s: tf.Tensor, save: tf.GradSaveFunc) => {
  const e = tf.exp(tf.sub(s, tf.max(s, -1, true)))
  const p = tf.div(e, tf.sum(e, -1, true))
  save([p])
  return { value: p, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.mul(saved[0], tf.sub(dy, tf.sum(tf.mul(dy, saved[0]), -1, true))) }
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (s: tf.Tensor) => tf.Tensor

const gelu = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
  const u2 = tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), GELU_A)), 2 * GELU_C)
  const t = tf.sub(1, tf.div(2, tf.add(tf.exp(u2), 1)))
  save([x, t])
  return {
    value: tf.mul(tf.mul(x, 0.5), tf.add(t, 1)),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ts] = saved
      // d/dx = 0.5 (1 + t) + 0.5 x (1 - t²) C (1 + 3A x²)
      const dt = tf.mul(tf.sub(1, tf.mul(ts, ts)), tf.add(tf.mul(tf.mul(xs, xs), 3 * GELU_A * GELU_C), GELU_C))
      return tf.mul(dy, tf.add(tf.mul(tf.add(ts, 1), 0.5), tf.mul(tf.mul(xs, 0.5), dt)))
    }
  }
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor) => tf.Tensor

export class GptNet {
  readonly weights: StateVar[]
  private readonly w: Map<string, tf.Variable>
  private readonly mask: tf.Tensor
  private readonly V: number
  private readonly T: number

  constructor (readonly spec: GptSpec, readonly text: TextSpec, seed: number) {
    const id = instances++
    this.V = text.vocab.length; this.T = text.context
    this.weights = gptWeights(spec, text).map((w, i) => {
      const init = initial(w, deriveSeed(seed, INIT_DOMAIN, i))
      const variable = tf.variable(init, true, `gpt${id}/${w.name}`)
      init.dispose()
      return { name: w.name, variable }
    })
    this.w = new Map(this.weights.map(s => [s.name, s.variable]))
    const m = new Float32Array(this.T * this.T)
    for (let i = 0; i < this.T; i++) for (let j = i + 1; j < this.T; j++) m[i * this.T + j] = MASKED
    this.mask = tf.tensor2d(m, [this.T, this.T])
  }

  private v (name: string): tf.Variable {
    const x = this.w.get(name)
    if (x === undefined) throw new Error(`no weight ${name}`)
    return x
  }

  private dense (a: tf.Tensor, name: string): tf.Tensor {
    return tf.add(tf.matMul(a, this.v(`${name}/kernel`)), this.v(`${name}/bias`))
  }

  private norm (h: tf.Tensor, name: string): tf.Tensor {
    const c = tf.sub(h, tf.mean(h, -1, true))
    const sd = tf.sqrt(tf.add(tf.mean(tf.square(c), -1, true), this.spec.epsilon))
    return tf.add(tf.mul(tf.div(c, sd), this.v(`${name}/gamma`)), this.v(`${name}/beta`))
  }

  private attention (a: tf.Tensor, b: string, B: number): tf.Tensor {
    const H = this.spec.heads; const T = this.T; const dh = this.spec.dModel / H
    const split = (t: tf.Tensor): tf.Tensor => tf.reshape(tf.transpose(tf.reshape(t, [B, T, H, dh]), [0, 2, 1, 3]), [B * H, T, dh])
    const q = split(this.dense(a, `${b}/q`)); const k = split(this.dense(a, `${b}/k`)); const val = split(this.dense(a, `${b}/v`))
    const s = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(dh)), this.mask)
    const o = tf.matMul(softmax(s), val)
    return tf.reshape(tf.transpose(tf.reshape(o, [B, H, T, dh]), [0, 2, 1, 3]), [B * T, this.spec.dModel])
  }

  /** Logits [B * context, V] of one-hot inputs x [B, context * V]. */
  logits (x: tf.Tensor): tf.Tensor {
    const B = x.shape[0]; const T = this.T; const d = this.spec.dModel
    const tok = tf.matMul(tf.reshape(x, [B * T, this.V]), this.v('wte/embeddings'))
    let h = tf.reshape(tf.add(tf.reshape(tok, [B, T * d]), tf.reshape(this.v('wpe/embeddings'), [1, T * d])), [B * T, d])
    for (let l = 0; l < this.spec.layers; l++) {
      const b = `block${l}`
      h = tf.add(h, this.dense(this.attention(this.norm(h, `${b}/ln1`), b, B), `${b}/proj`))
      h = tf.add(h, this.dense(gelu(this.dense(this.norm(h, `${b}/ln2`), `${b}/fc`)), `${b}/fc_out`))
    }
    return this.dense(this.norm(h, 'ln_f'), 'head')
  }

  /** Mean cross-entropy over every position: labels y [B, context * V] one-hot. */
  loss (x: tf.Tensor, y: tf.Tensor): tf.Scalar {
    return tf.losses.softmaxCrossEntropy(tf.reshape(y, [x.shape[0] * this.T, this.V]), this.logits(x)) as tf.Scalar
  }

  /** Mean cross-entropy (nats per token) over windows produced by `rows` in batches. */
  meanLoss (windows: number, batch: (from: number, n: number) => { x: Float32Array, y: Float32Array }, size = 32): number {
    let sum = 0
    for (let s = 0; s < windows; s += size) {
      const n = Math.min(size, windows - s)
      const b = batch(s, n)
      const l = tf.tidy(() => this.loss(tf.tensor2d(b.x, [n, this.T * this.V]), tf.tensor2d(b.y, [n, this.T * this.V])))
      sum += l.dataSync()[0] * n
      l.dispose()
    }
    return sum / windows
  }

  /** `length` tokens sampled after `prompt` (token ids) at temperature `temp`, with a seeded generator. */
  sample (prompt: number[], length: number, seed: number, temp = 0.8): number[] {
    const rng = new Rng(seed)
    const out = [...prompt]
    for (let i = 0; i < length; i++) {
      const ctx = out.slice(-this.T)
      const x = new Float32Array(this.T * this.V)
      ctx.forEach((t, p) => { x[p * this.V + t] = 1 })
      const lg = tf.tidy(() => this.logits(tf.tensor2d(x, [1, this.T * this.V])).slice([ctx.length - 1, 0], [1, this.V]))
      const z = Array.from(lg.dataSync()); lg.dispose()
      const m = Math.max(...z)
      const p = z.map(v => Math.exp((v - m) / temp))
      let r = rng.nextU32() / 2 ** 32 * p.reduce((a, b) => a + b, 0)
      let k = 0
      while (k < p.length - 1 && r >= p[k]) { r -= p[k]; k++ }
      out.push(k)
    }
    return out.slice(prompt.length)
  }

  dispose (): void {
    for (const w of this.weights) w.variable.dispose()
    this.mask.dispose()
  }
}
