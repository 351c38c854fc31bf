import * as tf from '@tensorflow/tfjs'
import { stateRoot, stepLeaf } from '../../protocols/commit/state.js'
import { merkleRoot, toHex } from '../../protocols/commit/merkle.js'
import { stateIsChunked } from '../../protocols/program/state-commitment.js'
import { isStateConversion } from '../../protocols/tape/state-io.js'
import { withStateConversions } from '../../protocols/tape/state-conversions.js'
import type { DType, TensorData } from '../../protocols/commit/tensor.js'
import { MAX_INLINE_CONST, STATE_PSEUDO_KERNEL, canonicalAttrs, skeletonRoot, tapeRoot, type InputRef, type TapeEntry, type TapeInput } from '../../protocols/tape/tape.js'
import { tapedKernelFunc } from './alias-kernels.js'
import { fastChunkedRoot, fastTensorRoot } from './fast-commit.js'
import type { Trainer } from './trainer.js'

// Op tape recorder: while one step runs, every kernel of the active backend is
// wrapped (via the public kernel registry) so its inputs and outputs are
// copied out with backend.readSync. Afterwards the original kernels are put
// back, so normal training pays nothing. Under a program's chunked state
// roots (stateIsChunked) the tape gets its state conversions
// (protocols/tape/state-conversions.ts) and its state roots are the chunked
// ones: each state tensor is then committed both ways (a dispute's cost).

interface KernelBackendLike { readSync: (dataId: object) => ArrayLike<number> }

export interface OpValues { inputs: TensorData[], outputs: TensorData[] }

export interface StepTape {
  /** 0-based index of the taped step (state `step` → `step + 1`) */
  step: number
  entries: TapeEntry[]
  /** recorded values: values[i] belongs to entries[i] (the '@state' entry has outputs []; a conversion's output is its input) */
  values: OpValues[]
  tapeRoot: string
  skeletonRoot: string
  /** the state roots of the program's scheme: chunked under stateIsChunked, else row + column */
  stateRootBefore: string
  stateRootAfter: string
  stateNames: string[]
}

function copyValues (backend: KernelBackendLike, info: tf.TensorInfo): TensorData {
  const v = backend.readSync(info.dataId) as Float32Array | Int32Array | Uint8Array
  return { shape: [...info.shape], dtype: info.dtype as DType, values: v.slice() }
}

function key (shape: readonly number[], dtype: string): string { return `${dtype}[${shape.join(',')}]` }

/** Tapes the trainer's next step (it advances the trainer by one step). */
export function tapeStep (trainer: Trainer): StepTape {
  const backendName = tf.getBackend()
  const step = trainer.step
  const before = trainer.stateTensors()
  const chunked = stateIsChunked(trainer.program)
  const stateRootBefore = chunked ? '' : toHex(stateRoot(before, step))
  const sources = new Map<object, Map<string, InputRef>>()
  const remember = (info: { dataId: object, shape: number[], dtype: string }, ref: InputRef): void => {
    let m = sources.get(info.dataId)
    if (m === undefined) { m = new Map(); sources.set(info.dataId, m) }
    const k = key(info.shape, info.dtype)
    if (!m.has(k)) m.set(k, ref) // the first source wins: state/data before ops
  }
  trainer.state.forEach((s, i) => remember(s.variable as unknown as tf.TensorInfo, { kind: 'state', index: i }))
  // commitments of values already seen (an op's output is usually a later op's
  // input); fastTensorRoot equals protocols/commit's root (tested)
  const seen = new Map<object, Map<string, string>>()
  const commit = (info: { dataId: object, shape: number[], dtype: string }, t: TensorData): string => {
    const k = key(info.shape, info.dtype)
    const hit = seen.get(info.dataId)?.get(k)
    if (hit !== undefined) return hit
    const c = toHex(fastTensorRoot(t))
    let m = seen.get(info.dataId)
    if (m === undefined) { m = new Map(); seen.set(info.dataId, m) }
    m.set(k, c)
    return c
  }
  // every state tensor is read (@StateRead), so its row + column commitment is needed whether an op reads it or not
  const preFine = chunked ? trainer.state.map((s, i) => commit(s.variable as unknown as tf.TensorInfo, before[i])) : []
  const entries: TapeEntry[] = []
  const values: OpValues[] = []
  const originals = tf.getKernelsForBackend(backendName)
  const restore = (): void => {
    for (const k of originals) { tf.unregisterKernel(k.kernelName, backendName); tf.registerKernel(k) }
  }
  for (const k of originals) {
    // the copying kernel where the runtime aliases (alias-kernels.ts): a tape's op references follow buffers
    const orig = tapedKernelFunc(k.kernelFunc)
    tf.unregisterKernel(k.kernelName, backendName)
    tf.registerKernel({
      ...k,
      kernelFunc: args => {
        const backend = args.backend as unknown as KernelBackendLike
        const names = Object.keys(args.inputs).filter(n => args.inputs[n] != null)
        const inVals = names.map(n => copyValues(backend, args.inputs[n] as tf.TensorInfo))
        const out = orig(args)
        const outs = Array.isArray(out) ? out : [out]
        const outVals = outs.map(o => copyValues(backend, o))
        const index = entries.length
        const inputs: TapeInput[] = names.map((n, j) => {
          const info = args.inputs[n] as tf.TensorInfo
          const ref = sources.get(info.dataId)?.get(key(info.shape, info.dtype)) ?? { kind: 'const' as const }
          const t = inVals[j]
          const inp: TapeInput = { name: n, ref, dtype: t.dtype, shape: t.shape, commitment: commit(info, t) }
          if (ref.kind === 'const' && t.values.length <= MAX_INLINE_CONST) inp.value = Array.from(t.values)
          return inp
        })
        outs.forEach((o, j) => remember(o, { kind: 'op', index, output: j }))
        entries.push({
          index,
          kernel: k.kernelName,
          attrs: canonicalAttrs(args.attrs as Record<string, unknown>),
          inputs,
          outputs: outVals.map((t, j) => ({ dtype: t.dtype, shape: t.shape, commitment: commit(outs[j], t) }))
        })
        values.push({ inputs: inVals, outputs: outVals })
        return out
      }
    })
  }
  try {
    trainer.runStep((x, y) => {
      remember(x as unknown as tf.TensorInfo, { kind: 'data', name: 'x' })
      remember(y as unknown as tf.TensorInfo, { kind: 'data', name: 'y' })
    })
  } finally {
    restore()
  }
  // the pseudo-entry: where each state tensor of the next step comes from
  const after = trainer.stateTensors()
  const index = entries.length
  entries.push({
    index,
    kernel: STATE_PSEUDO_KERNEL,
    attrs: {},
    inputs: trainer.state.map((s, i) => {
      const v = s.variable as unknown as tf.TensorInfo
      const ref = sources.get(v.dataId)?.get(key(v.shape, v.dtype)) ?? { kind: 'const' as const }
      return { name: s.name, ref, dtype: after[i].dtype, shape: after[i].shape, commitment: toHex(fastTensorRoot(after[i])) }
    }),
    outputs: []
  })
  values.push({ inputs: after, outputs: [] })
  if (chunked) return chunkedTape(step, entries, values, before, preFine, after, trainer.stateNames())
  return {
    step,
    entries,
    values,
    tapeRoot: tapeRoot(entries),
    skeletonRoot: skeletonRoot(entries),
    stateRootBefore,
    stateRootAfter: toHex(stateRoot(after, step + 1)),
    stateNames: trainer.stateNames()
  }
}

/** The step's tape with its state conversions, its roots the chunked state roots. */
function chunkedTape (
  step: number, raw: TapeEntry[], rawValues: OpValues[], before: TensorData[], preFine: string[], after: TensorData[], stateNames: string[]
): StepTape {
  const preChunked = before.map(fastChunkedRoot)
  const postChunked = after.map(fastChunkedRoot)
  const pre = before.map((t, i) => ({ dtype: t.dtype, shape: t.shape, chunked: toHex(preChunked[i]), fine: preFine[i] }))
  const { entries, writes } = withStateConversions(raw, pre, postChunked.map(toHex))
  const values: OpValues[] = [
    ...before.map(t => ({ inputs: [t], outputs: [t] })),
    ...rawValues.slice(0, -1),
    ...writes.map(t => ({ inputs: [after[t]], outputs: [after[t]] })),
    rawValues[rawValues.length - 1]
  ]
  return {
    step,
    entries,
    values,
    tapeRoot: tapeRoot(entries),
    skeletonRoot: skeletonRoot(entries),
    // chunkedStateRoot's tree over the leaves just computed
    stateRootBefore: toHex(merkleRoot([...preChunked, stepLeaf(step)])),
    stateRootAfter: toHex(merkleRoot([...postChunked, stepLeaf(step + 1)])),
    stateNames
  }
}

/** Re-executes one op in isolation from recorded input values; returns its outputs (a state conversion: its input). */
export function reexecuteOp (entry: Pick<TapeEntry, 'kernel' | 'attrs' | 'inputs'>, inputs: readonly TensorData[]): TensorData[] {
  if (entry.kernel === STATE_PSEUDO_KERNEL) throw new Error('the @state pseudo-entry is not an op')
  if (isStateConversion(entry.kernel)) {
    // an identity between the two commitments of one tensor: the same bits, dtype and shape
    if (inputs.length !== 1) throw new Error(`${entry.kernel} has one input, got ${inputs.length}`)
    return [{ shape: [...inputs[0].shape], dtype: inputs[0].dtype, values: inputs[0].values.slice() }]
  }
  const named: Record<string, tf.Tensor> = {}
  entry.inputs.forEach((inp, i) => { named[inp.name] = tf.tensor(inputs[i].values, inputs[i].shape, inputs[i].dtype) })
  try {
    const out = tf.engine().runKernel(entry.kernel, named as unknown as tf.NamedTensorMap, entry.attrs as tf.NamedAttrMap) as tf.Tensor | tf.Tensor[]
    const outs = Array.isArray(out) ? out : [out]
    const res = outs.map(o => ({ shape: [...o.shape], dtype: o.dtype as DType, values: (o.dataSync() as Float32Array).slice() }))
    for (const o of outs) o.dispose()
    return res
  } finally {
    for (const t of Object.values(named)) t.dispose()
  }
}

export function sameBits (a: TensorData, b: TensorData): boolean {
  if (a.dtype !== b.dtype || a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return false
  const x = new Uint8Array(a.values.buffer, a.values.byteOffset, a.values.byteLength)
  const y = new Uint8Array(b.values.buffer, b.values.byteOffset, b.values.byteLength)
  if (x.length !== y.length) return false
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}
