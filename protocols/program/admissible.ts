import { isBatchLayout } from '../data/layout.js'
import { MAX_ENTRY_BYTES, MAX_ENTRY_INPUTS, STATE_PSEUDO_KERNEL, encodeEntry } from '../tape/tape.js'
import { MAX_SLICE_BYTES } from '../dispute/messages.js'
import { MAX_CLAIM_BYTES } from '../dispute/claim-codec.js'
import { MAX_ADDRESSABLE_ELEMENTS } from '../dispute/init-claim.js'
import { sizeOf } from '../commit/tensor.js'
import { initLayout } from './init.js'
import { canonicalJson } from './canonical-json.js'
import { stepRoom } from './claim-room.js'
import { runtimeInfo } from './runtime.js'
import { CHUNKED_STATE_JUDGED, stateIsChunked } from './state-commitment.js'
import type { TaskProgram } from './program.js'
import type { LayerJson, TopologyInfo } from './topology.js'

// Admissibility: a program is verifiable only if every dispute over one of
// its steps can end in a claim the chain can judge. A dispute narrows to one
// op of the step's tape (an element claim: the op's kernel needs an element
// reference on the program's runtime) or to a batch input (a data claim: the
// batch must lay out one dataset row per example). A program outside that
// would let a cheating solver win by the challenger's timeout, so the chain
// refuses it at submit_task and the CLI before that. Likewise state 0: an
// initial-state claim is judged by generating the program's initial elements
// (protocols/program/init.ts), so an initializer the chain cannot generate (a
// normal one) would let a solver start from a state of its choosing, and
// leave the verifier that saw it nothing to back its reject with.
//
// The kernels a training step emits follow from the program alone (tfjs
// Layers + optimizer.minimize); test/unit/protocols/admissible.test.ts tapes
// real steps and checks this table equals what the backend runs.

/** softmaxCrossEntropy on logits, forward and backward, and minimize's bookkeeping */
const LOSS = ['Identity', 'Reshape', 'Cast', 'Max', 'Sub', 'Exp', 'Sum', 'Log', 'Neg', 'Multiply', 'RealDiv', 'Add']
const ACTIVATION: Record<string, string[]> = { linear: [], relu: ['Relu', 'Step', 'Multiply'] }
/** forward and backward of each layer, bias (Add forward, Sum backward) included */
const LAYER: Record<string, string[]> = {
  Dense: ['_FusedMatMul', 'BatchMatMul', 'Add', 'Sum'],
  Conv2D: ['Conv2D', 'Conv2DBackpropFilter', 'Conv2DBackpropInput', 'Add', 'Sum'],
  MaxPooling2D: ['MaxPool', 'MaxPoolGrad'],
  Flatten: ['Reshape'],
  Reshape: ['Reshape']
}
/**
 * The GPT (node/train/gpt.ts), forward and backward: one-hot embedding and
 * dense layers as MatMuls (with transposes in the gradients and attention),
 * heads split and merged by Transpose, layer norm, masked softmax and GELU
 * from elementwise ops and last-axis reductions, bias and position gradients
 * as column Sums.
 */
const GPT = ['BatchMatMul', 'Reshape', 'Transpose', 'Add', 'Sub', 'Multiply', 'RealDiv', 'Neg', 'Square', 'Sqrt', 'Exp', 'Mean', 'Max', 'Sum', 'Cast']
const OPTIMIZER: Record<string, string[]> = {
  sgd: ['Multiply', 'Sub'],
  adam: ['Multiply', 'Add', 'Sub', 'Square', 'Sqrt', 'RealDiv']
}

/** The kernels one training step of the (validated) program emits, sorted. */
export function stepKernels (p: Pick<TaskProgram, 'model' | 'optimizer'>): string[] {
  const out = new Set(LOSS)
  const add = (ks: string[] | undefined, what: string): void => {
    if (ks === undefined) throw new RangeError(`no kernel list for ${what}`)
    for (const k of ks) out.add(k)
  }
  const topo = p.model.topology
  if (topo === undefined) add(GPT, 'model gpt')
  for (const l of (topo?.config.layers ?? []) as LayerJson[]) {
    add(LAYER[l.class_name], `layer ${l.class_name}`)
    const a = l.config.activation
    if (a !== undefined) add(ACTIVATION[String(a)], `activation ${String(a)}`)
  }
  add(OPTIMIZER[p.optimizer.name], `optimizer ${p.optimizer.name}`)
  return [...out].sort()
}

/** The batch inputs of a step: x [batch, ...inputShape] and y [batch, classes], with the dataset row width each must hold. */
export function batchInputs (p: Pick<TaskProgram, 'batchSize' | 'dataset'> & { info: Pick<TopologyInfo, 'inputShape'> }): Array<{ name: 'x' | 'y', shape: number[], width: number }> {
  return [
    { name: 'x', shape: [p.batchSize, ...p.info.inputShape], width: p.dataset.rowSize },
    { name: 'y', shape: [p.batchSize, p.dataset.classes], width: p.dataset.classes }
  ]
}

/**
 * An upper bound on the encoded size of the step's @state entry (one input per
 * state tensor: weights, then Adam's moments and beta powers), which a state
 * claim carries: names and shapes are the program's, refs and commitments the
 * largest they can be.
 */
export function stateEntryBound (p: Pick<TaskProgram, 'optimizer'> & { info: Pick<TopologyInfo, 'weights'> }): { inputs: number, bytes: number } {
  const weights = p.info.weights.map(w => ({ name: `${w.layer}/${w.name}`, shape: w.shape }))
  const all = p.optimizer.name === 'adam'
    ? [...weights, ...weights.map(w => ({ ...w, name: `${w.name}/m` })), ...weights.map(w => ({ ...w, name: `${w.name}/v` })), { name: 'adam/accBeta1', shape: [] }, { name: 'adam/accBeta2', shape: [] }]
    : weights
  const entry = {
    index: 0xffffffff,
    kernel: STATE_PSEUDO_KERNEL,
    attrs: {},
    inputs: all.map(t => ({ name: t.name, ref: { kind: 'op' as const, index: 0xffffffff, output: 0xffffffff }, dtype: 'float32' as const, shape: t.shape, commitment: 'f'.repeat(64) })),
    outputs: []
  }
  return { inputs: all.length, bytes: encodeEntry(entry).length }
}

export interface Admissibility {
  ok: boolean
  runtime: string
  /** kernels the step emits */
  kernels: string[]
  /** kernels without an element reference on the runtime */
  missingKernels: string[]
  /** batch inputs without a data claim */
  badInputs: string[]
  /** why not, for people (empty when ok) */
  reason: string
}

/**
 * Whether the validated program `p` is verifiable: `supportsElement` is the
 * reference semantics the chain judges with (protocols/reference).
 */
export function admissibility (
  p: TaskProgram & { info: TopologyInfo }, supportsElement: (runtime: string, kernel: string) => boolean,
  /** whether chunked state roots are judged end to end (a test of the other rules may say so) */
  chunkedJudged: boolean = CHUNKED_STATE_JUDGED
): Admissibility {
  const kernels = stepKernels(p)
  const missingKernels = kernels.filter(k => !supportsElement(p.runtime, k))
  const badInputs = batchInputs(p).filter(b => !isBatchLayout(b.shape, p.batchSize, b.width)).map(b => `${b.name} [${b.shape.join(',')}]`)
  const problems: string[] = []
  const rt = runtimeInfo(p.runtime)
  if (!rt.verifiable) problems.push(`runtime ${p.runtime} is not bitwise reproducible`)
  if (missingKernels.length > 0) problems.push(`runtime ${p.runtime} has no element reference for ${missingKernels.join(', ')}`)
  if (badInputs.length > 0) problems.push(`no data claim for batch input ${badInputs.join(', ')}`)
  // a dispute over chunked roots needs the chunks answer, the chunk-tree walk and the chunk serve (docs/training.md "Chunked roots: design")
  if (stateIsChunked(p) && !chunkedJudged) problems.push('its state commitment "chunked" is not judged on chain yet')
  const st = stateEntryBound(p)
  if (st.inputs > MAX_ENTRY_INPUTS || st.bytes > MAX_ENTRY_BYTES) problems.push(`its state has ${st.inputs} tensors, so its ${STATE_PSEUDO_KERNEL} entry (up to ${st.bytes} bytes) exceeds what a state claim carries (${MAX_ENTRY_INPUTS} tensors, ${MAX_ENTRY_BYTES} bytes)`)
  // every claim and every forced answer of a dispute must fit on chain (claim-room.ts)
  const room = stepRoom(p)
  const { info: _info, ...bare } = p
  const claimBytes = room.claim.bytes + new TextEncoder().encode(canonicalJson(bare)).length
  if (claimBytes > MAX_CLAIM_BYTES) problems.push(`a claim on ${room.claim.what} needs up to ${claimBytes} bytes, more than a claim may hold (${MAX_CLAIM_BYTES})`)
  if (room.leaf.bytes > MAX_SLICE_BYTES) problems.push(`${room.leaf.what} is ${room.leaf.bytes} bytes, more than a dispute's slice answer may hold (${MAX_SLICE_BYTES})`)
  const init = initialStateProblem(p)
  if (init !== undefined) problems.push(init)
  const ok = problems.length === 0
  return {
    ok,
    runtime: p.runtime,
    kernels,
    missingKernels,
    badInputs,
    reason: ok ? '' : `not verifiable: ${problems.join('; ')} — a dispute over its steps could not be adjudicated on chain (pin a runtime with references for every kernel, e.g. tfjs-wasm@4.22.0-simd; train it locally with "train --plain")`
  }
}

/** Why the chain could not judge a claim on the program's state 0, if it could not: an initializer it cannot generate, or a tensor past what it addresses. */
function initialStateProblem (p: TaskProgram): string | undefined {
  let layout: ReturnType<typeof initLayout>
  try { layout = initLayout(p) } catch (e) { return `its initial state cannot be generated on chain (${(e as Error).message})` }
  const big = layout.find(t => sizeOf(t.shape) > MAX_ADDRESSABLE_ELEMENTS)
  return big === undefined ? undefined : `its initial tensor ${big.name} has more than the ${MAX_ADDRESSABLE_ELEMENTS} elements an initial-state claim addresses`
}
