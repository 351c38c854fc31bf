// Validation of a model topology in tfjs Layers JSON (the object form of
// `model.toJSON(null, false)` for a Sequential model) without loading tfjs:
// a whitelist of layers whose kernels have reference semantics, and Keras
// shape inference so a shape mismatch is reported before any training runs.

export interface LayerJson { class_name: string, config: Record<string, unknown> }
export interface SequentialJson { class_name: 'Sequential', config: { name?: string, layers: LayerJson[] } }

/** name: 'kernel' or 'bias' for Layers models; GPT weights add 'embeddings', 'gamma', 'beta' */
export interface WeightSpec { layer: string, name: string, shape: number[] }
export interface TopologyInfo {
  inputShape: number[]
  outputShape: number[]
  weights: WeightSpec[]
  /** parameter count */
  params: number
  /** multiply-adds of one sample's forward pass (a training step does about 3x this per sample) */
  macs: number
  /** values one sample's forward pass produces, input and every layer's output (kept for the backward pass) */
  activations: number
}

export class ProgramError extends Error {
  constructor (message: string) { super(message); this.name = 'ProgramError' }
}

const ACTIVATIONS = new Set(['linear', 'relu'])
const INITIALIZERS = new Set(['GlorotUniform', 'GlorotNormal', 'HeUniform', 'HeNormal', 'LecunUniform', 'LecunNormal', 'Zeros'])
export const SEEDED_INITIALIZERS = new Set(['GlorotUniform', 'GlorotNormal', 'HeUniform', 'HeNormal', 'LecunUniform', 'LecunNormal'])
const LAYERS = new Set(['Dense', 'Conv2D', 'MaxPooling2D', 'Flatten', 'Reshape'])

function isObj (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function posInt (v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1 << 20) throw new ProgramError(`${what} must be a positive integer, got ${JSON.stringify(v)}`)
  return v
}

function pair (v: unknown, what: string, dflt?: [number, number]): [number, number] {
  if (v === undefined || v === null) {
    if (dflt !== undefined) return dflt
    throw new ProgramError(`${what} is required`)
  }
  if (typeof v === 'number') return [posInt(v, what), posInt(v, what)]
  if (Array.isArray(v) && v.length === 2) return [posInt(v[0], what), posInt(v[1], what)]
  throw new ProgramError(`${what} must be an integer or a pair of integers, got ${JSON.stringify(v)}`)
}

function checkActivation (c: Record<string, unknown>, where: string): void {
  const a = c.activation ?? 'linear'
  if (typeof a !== 'string' || !ACTIVATIONS.has(a)) throw new ProgramError(`${where}: unsupported activation ${JSON.stringify(a)} (supported: ${[...ACTIVATIONS].join(', ')})`)
}

function checkInit (v: unknown, where: string, dflt: string): void {
  if (v === undefined || v === null) { if (!INITIALIZERS.has(dflt)) throw new ProgramError(`${where}: no initializer`); return }
  if (!isObj(v) || typeof v.class_name !== 'string' || !INITIALIZERS.has(v.class_name)) {
    throw new ProgramError(`${where}: unsupported initializer ${JSON.stringify(isObj(v) ? v.class_name : v)} (supported: ${[...INITIALIZERS].join(', ')})`)
  }
}

function convOut (size: number, k: number, s: number, padding: string): number {
  return padding === 'same' ? Math.ceil(size / s) : Math.ceil((size - k + 1) / s)
}

function padding (v: unknown, where: string): string {
  const p = v ?? 'valid'
  if (p !== 'valid' && p !== 'same') throw new ProgramError(`${where}: padding must be "valid" or "same", got ${JSON.stringify(p)}`)
  return p
}

export function validateTopology (topology: unknown, rowSize: number, classes: number): TopologyInfo {
  if (!isObj(topology)) throw new ProgramError('model.topology must be a tfjs Layers JSON object')
  if (topology.class_name !== 'Sequential') throw new ProgramError(`model.topology: only Sequential models are supported, got ${JSON.stringify(topology.class_name)}`)
  const cfg = topology.config
  if (!isObj(cfg) || !Array.isArray(cfg.layers)) throw new ProgramError('model.topology.config.layers must be an array')
  const layers = cfg.layers as unknown[]
  if (layers.length === 0) throw new ProgramError('model has no layers')
  if (layers.length > 64) throw new ProgramError(`model has ${layers.length} layers (max 64)`)
  let shape: number[] = []
  let inputShape: number[] = []
  const weights: WeightSpec[] = []
  const names = new Set<string>()
  let macs = 0
  let activations = rowSize
  layers.forEach((l, i) => {
    if (!isObj(l) || typeof l.class_name !== 'string' || !isObj(l.config)) throw new ProgramError(`layer ${i}: expected {class_name, config}`)
    const c = l.config
    const name = typeof c.name === 'string' ? c.name : `layer${i}`
    if (names.has(name)) throw new ProgramError(`layer ${i}: duplicate layer name "${name}"`)
    names.add(name)
    const where = `layer ${i} (${l.class_name} "${name}")`
    if (!LAYERS.has(l.class_name)) throw new ProgramError(`${where}: unknown or unsupported layer (supported: ${[...LAYERS].join(', ')})`)
    if (i === 0) {
      const bis = c.batch_input_shape
      if (!Array.isArray(bis) || bis[0] !== null) throw new ProgramError(`${where}: the first layer needs batch_input_shape [null, ...]`)
      const declared = bis.slice(1).map((d, k) => posInt(d, `${where}: batch_input_shape[${k + 1}]`))
      if (declared.length === 0 || declared.reduce((a, b) => a * b, 1) !== rowSize) {
        throw new ProgramError(`${where}: shape mismatch: batch_input_shape [null,${declared.join(',')}] does not hold a dataset row of ${rowSize} values`)
      }
      shape = declared
      inputShape = [...declared]
    }
    if (c.dtype !== undefined && c.dtype !== 'float32') throw new ProgramError(`${where}: dtype must be float32`)
    switch (l.class_name) {
      case 'Dense': {
        const units = posInt(c.units, `${where}: units`)
        if (shape.length !== 1) throw new ProgramError(`${where}: shape mismatch: Dense needs a flat input, got [${shape.join(',')}] (add a Flatten layer)`)
        checkActivation(c, where)
        checkInit(c.kernel_initializer, where, 'GlorotUniform')
        weights.push({ layer: name, name: 'kernel', shape: [shape[0], units] })
        macs += shape[0] * units
        if (c.use_bias !== false) { checkInit(c.bias_initializer, where, 'Zeros'); weights.push({ layer: name, name: 'bias', shape: [units] }) }
        shape = [units]
        break
      }
      case 'Conv2D': {
        if (shape.length !== 3) throw new ProgramError(`${where}: shape mismatch: Conv2D needs [h,w,c] input, got [${shape.join(',')}]`)
        if (c.data_format !== undefined && c.data_format !== 'channelsLast') throw new ProgramError(`${where}: only data_format channelsLast is supported`)
        const filters = posInt(c.filters, `${where}: filters`)
        const [kh, kw] = pair(c.kernel_size, `${where}: kernel_size`)
        const [sh, sw] = pair(c.strides, `${where}: strides`, [1, 1])
        const [dh, dw] = pair(c.dilation_rate, `${where}: dilation_rate`, [1, 1])
        if (dh !== 1 || dw !== 1) throw new ProgramError(`${where}: dilation is not supported`)
        const p = padding(c.padding, where)
        checkActivation(c, where)
        checkInit(c.kernel_initializer, where, 'GlorotUniform')
        const oh = convOut(shape[0], kh, sh, p); const ow = convOut(shape[1], kw, sw, p)
        if (oh < 1 || ow < 1) throw new ProgramError(`${where}: shape mismatch: kernel ${kh}x${kw} does not fit input [${shape.join(',')}]`)
        weights.push({ layer: name, name: 'kernel', shape: [kh, kw, shape[2], filters] })
        macs += oh * ow * kh * kw * shape[2] * filters
        if (c.use_bias !== false) { checkInit(c.bias_initializer, where, 'Zeros'); weights.push({ layer: name, name: 'bias', shape: [filters] }) }
        shape = [oh, ow, filters]
        break
      }
      case 'MaxPooling2D': {
        if (shape.length !== 3) throw new ProgramError(`${where}: shape mismatch: MaxPooling2D needs [h,w,c] input, got [${shape.join(',')}]`)
        const [ph, pw] = pair(c.pool_size, `${where}: pool_size`, [2, 2])
        const [sh, sw] = pair(c.strides, `${where}: strides`, [ph, pw])
        const p = padding(c.padding, where)
        const oh = convOut(shape[0], ph, sh, p); const ow = convOut(shape[1], pw, sw, p)
        if (oh < 1 || ow < 1) throw new ProgramError(`${where}: shape mismatch: pool ${ph}x${pw} does not fit input [${shape.join(',')}]`)
        macs += oh * ow * shape[2] * ph * pw
        shape = [oh, ow, shape[2]]
        break
      }
      case 'Flatten':
        shape = [shape.reduce((a, b) => a * b, 1)]
        break
      case 'Reshape': {
        const t = c.target_shape
        if (!Array.isArray(t) || t.length === 0) throw new ProgramError(`${where}: target_shape must be a non-empty array`)
        const ts = t.map((d, k) => posInt(d, `${where}: target_shape[${k}]`))
        const a = shape.reduce((x, y) => x * y, 1); const b = ts.reduce((x, y) => x * y, 1)
        if (a !== b) throw new ProgramError(`${where}: shape mismatch: cannot reshape [${shape.join(',')}] (${a} values) to [${ts.join(',')}]`)
        shape = ts
        break
      }
    }
    if (l.class_name !== 'Flatten' && l.class_name !== 'Reshape') activations += shape.reduce((a, b) => a * b, 1)
  })
  if (shape.length !== 1 || shape[0] !== classes) {
    throw new ProgramError(`shape mismatch: the model outputs [${shape.join(',')}] but the dataset has ${classes} classes (the last layer must be Dense with ${classes} units, linear logits)`)
  }
  const last = layers[layers.length - 1] as LayerJson
  if (last.class_name !== 'Dense' || (last.config.activation ?? 'linear') !== 'linear') {
    throw new ProgramError('the last layer must be a Dense layer with linear activation (the loss applies softmax cross-entropy to logits)')
  }
  const params = weights.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1), 0)
  return { inputShape: [...inputShape], outputShape: shape, weights, params, macs, activations }
}
