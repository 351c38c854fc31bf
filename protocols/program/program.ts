import { assertSeed } from '../data/prng.js'
import { canonicalHash } from './canonical-json.js'
import { runtimeInfo, WASM_RUNTIME } from './runtime.js'
import { DEFAULT_GPT, validateGpt, validateTextSpec, type GptSpec, type TextSpec } from './gpt.js'
import { ProgramError, validateTopology, type SequentialJson, type TopologyInfo } from './topology.js'
import { ZOO } from './zoo.js'
import { MAX_ROOT_EVERY } from '../pol/segments.js'
import { validateStateCommitment, type StateCommitment } from './state-commitment.js'

// The task program: everything that determines a training run bit for bit.
// Version 1. Inputs are rows of `rowSize` uint8 values normalised in plain JS
// to float32 x/255; labels are one-hot float32. The loss is the mean softmax
// cross-entropy over the batch (tf.losses.softmaxCrossEntropy on logits).
// A text task (dataset kind 'text', model gpt) reads windows of `context`
// tokens as one-hot float32 rows (normalize 'onehot'), its labels are the
// next tokens one-hot, and the loss is the mean over every position.

export const PROGRAM_VERSION = 1
// the proof holds one 32-byte root per step: 500k steps ≈ 33 MB of proof.json
export const MAX_STEPS = 500_000
export const MAX_BATCH = 4096
/** the largest state-root spacing a program may name (a dispute's segment move carries m − 1 roots) */
export { MAX_ROOT_EVERY }

export interface DatasetRef {
  /** 'idx': MNIST-format files; 'synthetic': generated from `syntheticSeed`; 'text': a packaged text corpus */
  kind: 'idx' | 'synthetic' | 'text'
  name: string
  /** content hash, see docs/training.md ("Dataset hash") */
  sha256: string
  trainSize: number
  testSize: number
  /** values per input row (28*28; text: context * vocab one-hot values) */
  rowSize: number
  /** values per label row (the classes; text: context * vocab, the next tokens one-hot) */
  classes: number
  /** text only: vocabulary and window length */
  text?: TextSpec
  syntheticSeed?: number
  /**
   * commitment root (hex, protocols/commit) of the normalised training rows as
   * a float32 tensor [trainSize, rowSize]: lets the chain check a batch row
   * with one row proof. Derived from the content (sha256 binds it); optional.
   */
  rowsRoot?: string
  /** content identifier once the dataset is published (shard issue) */
  cid?: string
}

export type OptimizerSpec =
  | { name: 'sgd', learningRate: number }
  | { name: 'adam', learningRate: number, beta1: number, beta2: number, epsilon: number }

export type ModelSpec = { name: string, topology: SequentialJson, gpt?: undefined } | { name: 'gpt', gpt: GptSpec, topology?: undefined }

export interface TaskProgram {
  version: 1
  runtime: string
  model: ModelSpec
  seed: number
  dataset: DatasetRef
  batchSize: number
  steps: number
  optimizer: OptimizerSpec
  checkpointEvery: number
  /**
   * the proof commits the state root after every `rootEvery`-th step (and the
   * last); absent = 1, every step (docs/training.md "State roots every m
   * steps"). Only 1 is accepted so far: the segment dispute game that m > 1
   * needs is built in protocols and on the chain, not on the node.
   */
  rootEvery?: number
  /**
   * the commitment of each state tensor under the state roots: absent = row +
   * column (tensor.ts), 'chunked' = 4 KiB chunks (chunked.ts; docs/training.md
   * "Chunked roots: design"; stateIsChunked in state-commitment.ts)
   */
  stateCommitment?: StateCommitment
  loss: 'softmax-cross-entropy'
  normalize: 'div255' | 'onehot'
}

function isObj (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function int (v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ProgramError(`${what} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`)
  return v
}

function num (v: unknown, what: string, lo: number, hi: number, openLo = true): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || (openLo ? v <= lo : v < lo) || v >= hi) throw new ProgramError(`${what} must be a number in ${openLo ? '(' : '['}${lo}, ${hi}), got ${JSON.stringify(v)}`)
  return v
}

const HEX64 = /^[0-9a-f]{64}$/
/** the largest finite float32 (tfjs keeps the learning rate as a float32 scalar) */
const MAX_LEARNING_RATE = 3.4028234663852886e38

/** Validates an untrusted program object; returns it typed, or throws ProgramError. */
export function validateProgram (p: unknown): TaskProgram & { info: TopologyInfo } {
  if (!isObj(p)) throw new ProgramError('program must be a JSON object')
  if (p.version !== PROGRAM_VERSION) throw new ProgramError(`unsupported program version ${JSON.stringify(p.version)} (this node understands ${PROGRAM_VERSION})`)
  if (typeof p.runtime !== 'string') throw new ProgramError('runtime must be a string')
  try { runtimeInfo(p.runtime) } catch (e) { throw new ProgramError((e as Error).message) }
  assertSeedP(p.seed, 'seed')
  const d = p.dataset
  if (!isObj(d)) throw new ProgramError('dataset must be an object')
  if (d.kind !== 'idx' && d.kind !== 'synthetic' && d.kind !== 'text') throw new ProgramError(`dataset.kind must be "idx", "synthetic" or "text", got ${JSON.stringify(d.kind)}`)
  if (typeof d.name !== 'string' || d.name.length === 0 || d.name.length > 100) throw new ProgramError('dataset.name must be a non-empty string')
  if (typeof d.sha256 !== 'string' || !HEX64.test(d.sha256)) throw new ProgramError('dataset.sha256 must be 64 lowercase hex digits')
  const trainSize = int(d.trainSize, 'dataset.trainSize', 1, 100_000_000)
  int(d.testSize, 'dataset.testSize', 0, 100_000_000)
  const rowSize = int(d.rowSize, 'dataset.rowSize', 1, 1 << 24)
  // a text row's labels are context × vocab one-hot values
  const classes = int(d.classes, 'dataset.classes', 2, d.kind === 'text' ? 1 << 24 : 1 << 16)
  if (d.kind === 'synthetic') assertSeedP(d.syntheticSeed, 'dataset.syntheticSeed')
  if (d.cid !== undefined && typeof d.cid !== 'string') throw new ProgramError('dataset.cid must be a string')
  if (d.rowsRoot !== undefined && (typeof d.rowsRoot !== 'string' || !HEX64.test(d.rowsRoot))) throw new ProgramError('dataset.rowsRoot must be 64 lowercase hex digits')
  for (const k of Object.keys(d)) if (!['kind', 'name', 'sha256', 'trainSize', 'testSize', 'rowSize', 'classes', 'syntheticSeed', 'rowsRoot', 'cid', 'text'].includes(k)) throw new ProgramError(`unknown dataset field "${k}"`)
  const text = d.kind === 'text' ? validateTextSpec(d.text) : undefined
  if (text === undefined && d.text !== undefined) throw new ProgramError('dataset.text is only for a text dataset')
  const m = p.model
  if (!isObj(m) || typeof m.name !== 'string') throw new ProgramError('model must be {name, topology} or {name: "gpt", gpt}')
  for (const k of Object.keys(m)) if (!['name', 'topology', 'gpt'].includes(k)) throw new ProgramError(`unknown model field "${k}"`)
  let info: TopologyInfo
  if (m.gpt !== undefined) {
    if (m.name !== 'gpt' || m.topology !== undefined) throw new ProgramError('a GPT model is {name: "gpt", gpt} (no topology)')
    if (text === undefined) throw new ProgramError('a GPT model needs a text dataset')
    info = validateGpt(m.gpt, text, rowSize, classes).info
  } else {
    if (text !== undefined) throw new ProgramError('a text dataset needs a GPT model (--model gpt)')
    info = validateTopology(m.topology, rowSize, classes)
  }
  const batchSize = int(p.batchSize, 'batchSize', 1, MAX_BATCH)
  if (batchSize > trainSize) throw new ProgramError(`batchSize ${batchSize} is larger than the training set (${trainSize} rows)`)
  int(p.steps, 'steps', 1, MAX_STEPS)
  const checkpointEvery = int(p.checkpointEvery, 'checkpointEvery', 1, MAX_STEPS)
  if (p.rootEvery !== undefined) validateRootEvery(p.rootEvery, checkpointEvery)
  validateStateCommitment(p.stateCommitment)
  const o = p.optimizer
  if (!isObj(o)) throw new ProgramError('optimizer must be an object')
  // any finite float32 learning rate: a run that diverges ends with a diverged proof (docs/disputes.md, "NaN")
  if (o.name === 'sgd') {
    num(o.learningRate, 'optimizer.learningRate', 0, MAX_LEARNING_RATE)
  } else if (o.name === 'adam') {
    num(o.learningRate, 'optimizer.learningRate', 0, MAX_LEARNING_RATE)
    num(o.beta1, 'optimizer.beta1', 0, 1, false)
    num(o.beta2, 'optimizer.beta2', 0, 1, false)
    num(o.epsilon, 'optimizer.epsilon', 0, 1)
  } else {
    throw new ProgramError(`unknown optimizer ${JSON.stringify(o.name)} (use sgd or adam)`)
  }
  if (p.loss !== 'softmax-cross-entropy') throw new ProgramError(`unknown loss ${JSON.stringify(p.loss)} (only softmax-cross-entropy)`)
  const norm = text === undefined ? 'div255' : 'onehot'
  if (p.normalize !== norm) throw new ProgramError(`normalize must be ${norm} for a ${d.kind} dataset, got ${JSON.stringify(p.normalize)}`)
  const known = new Set(['version', 'runtime', 'model', 'seed', 'dataset', 'batchSize', 'steps', 'optimizer', 'checkpointEvery', 'rootEvery', 'stateCommitment', 'loss', 'normalize'])
  for (const k of Object.keys(p)) if (!known.has(k)) throw new ProgramError(`unknown program field "${k}"`)
  return { ...(p as unknown as TaskProgram), info }
}

/**
 * rootEvery m: checkpoints must be committed states (a replay starts from one
 * and its root must be in the proof), so m divides checkpointEvery. Whether a
 * chain takes tasks of m > 1 is its own parameter (max_root_every).
 */
function validateRootEvery (v: unknown, checkpointEvery: number): number {
  const m = int(v, 'rootEvery', 1, MAX_ROOT_EVERY)
  if (checkpointEvery % m !== 0) throw new ProgramError(`rootEvery ${m} must divide checkpointEvery ${checkpointEvery} (every checkpoint is a committed state)`)
  return m
}

/** The program's state-root spacing: 1 (a root after every step) unless it names another. */
export function rootEveryOf (p: TaskProgram): number {
  return p.rootEvery ?? 1
}

function assertSeedP (v: unknown, what: string): void {
  try { assertSeed(v, what) } catch (e) { throw new ProgramError((e as Error).message) }
}

/** sha256 (hex) of the canonical JSON of the program (without derived fields). */
export function programHash (p: TaskProgram): string {
  const { info: _info, ...rest } = p as TaskProgram & { info?: unknown }
  return canonicalHash(rest)
}

export interface NewProgramOptions {
  model: string
  dataset: DatasetRef
  steps: number
  seed?: number
  batchSize?: number
  checkpointEvery?: number
  /** state roots every m steps (default 1; the field is written only when it is not 1, so such programs hash as before) */
  rootEvery?: number
  /** 'chunked' state roots (written only when set, so other programs hash as before) */
  stateCommitment?: StateCommitment
  optimizer?: 'sgd' | 'adam'
  learningRate?: number
  /** default the old runtime: a pure function cannot see this machine's psk1 addon (node/train/default-runtime.ts's newTaskProgram can) */
  runtime?: string
  /** GPT sizes (model gpt), defaults DEFAULT_GPT */
  gpt?: Partial<GptSpec>
}

/** Builds a program from the zoo; validates it before returning. */
export function newProgram (o: NewProgramOptions): TaskProgram {
  const z = ZOO[o.model]
  if (z === undefined && o.model !== 'gpt') throw new ProgramError(`unknown model "${o.model}" (zoo: ${[...Object.keys(ZOO), 'gpt'].join(', ')})`)
  const optName = o.optimizer ?? 'adam'
  const optimizer: OptimizerSpec = optName === 'sgd'
    ? { name: 'sgd', learningRate: o.learningRate ?? 0.05 }
    : { name: 'adam', learningRate: o.learningRate ?? 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 }
  const p: TaskProgram = {
    version: 1,
    runtime: o.runtime ?? WASM_RUNTIME,
    model: z === undefined ? { name: 'gpt', gpt: { ...DEFAULT_GPT, ...o.gpt } } : { name: o.model, topology: z.topology() },
    seed: o.seed ?? 1,
    dataset: o.dataset,
    batchSize: o.batchSize ?? 64,
    steps: o.steps,
    optimizer,
    checkpointEvery: o.checkpointEvery ?? 100,
    ...(o.rootEvery !== undefined && o.rootEvery !== 1 ? { rootEvery: o.rootEvery } : {}),
    ...(o.stateCommitment !== undefined ? { stateCommitment: o.stateCommitment } : {}),
    loss: 'softmax-cross-entropy',
    normalize: o.dataset.kind === 'text' ? 'onehot' : 'div255'
  }
  validateProgram(p)
  return p
}
