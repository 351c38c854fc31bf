import { BACKEND_CHOICES } from '../train/backend-choice.js'
import { EngineProtocolError, JOB_KINDS, type EngineFaults, type EngineMessage, type EngineRequest, type JobKind, type JobResults } from './protocol.js'

// Every engine message checked on receipt, field by field: a host never acts
// on a result of the wrong shape, and an engine never runs a job it cannot
// read. What fails is an EngineProtocolError naming the field.

type Obj = Record<string, unknown>

const bad = (path: string, what: string): never => { throw new EngineProtocolError(`${path}: ${what}`) }

function obj (v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(path, 'expected an object')
  return v as Obj
}
const str = (v: unknown, path: string): string => typeof v === 'string' ? v : bad(path, 'expected a string')
const num = (v: unknown, path: string): number => typeof v === 'number' ? v : bad(path, 'expected a number')
const bool = (v: unknown, path: string): boolean => typeof v === 'boolean' ? v : bad(path, 'expected a boolean')
const int = (v: unknown, path: string): number => typeof v === 'number' && Number.isSafeInteger(v) ? v : bad(path, 'expected an integer')
const nat = (v: unknown, path: string): number => int(v, path) >= 0 ? v as number : bad(path, 'expected an integer ≥ 0')
function opt<T> (check: (v: unknown, path: string) => T): (v: unknown, path: string) => T | undefined {
  return (v, path) => v === undefined ? undefined : check(v, path)
}
function arr<T> (check: (v: unknown, path: string) => T, max = 1_000_000): (v: unknown, path: string) => T[] {
  return (v, path) => {
    if (!Array.isArray(v)) return bad(path, 'expected an array')
    if (v.length > max) bad(path, `more than ${max} entries`)
    return v.map((x, i) => check(x, `${path}[${i}]`))
  }
}
function oneOf<T extends string> (choices: readonly T[]): (v: unknown, path: string) => T {
  return (v, path) => choices.includes(v as T) ? v as T : bad(path, `expected one of ${choices.join(', ')}`)
}
/** `o` with exactly the listed fields checked (an unknown field is refused: a typo never passes silently). */
function fields (o: Obj, path: string, spec: Record<string, (v: unknown, path: string) => unknown>): void {
  for (const k of Object.keys(o)) if (!(k in spec)) bad(`${path}.${k}`, 'unknown field')
  for (const [k, check] of Object.entries(spec)) check(o[k], `${path}.${k}`)
}

const backend = opt(oneOf(BACKEND_CHOICES))
const layout = opt(oneOf(['manifest', 'program'] as const))
const opFault = (v: unknown, p: string): unknown => { fields(obj(v, p), p, { kernel: str, step: nat }); return v }
const tapeFaults = (v: unknown, p: string): unknown => { fields(obj(v, p), p, { ops: arr(opFault), weights: arr(nat) }); return v }
const faults = (v: unknown, p: string): EngineFaults => {
  fields(obj(v, p), p, { ops: arr(opFault), weights: arr(nat), nanThrough: opt(bool), fakeDivergence: opt(nat), forcedSteps: opt(arr(nat)) })
  return v as EngineFaults
}

const JOB_FIELDS: Record<JobKind, Record<string, (v: unknown, path: string) => unknown>> = {
  train: {
    taskFile: str, outDir: str, resume: opt(bool), datasetDir: opt(str), backend, until: opt(nat), evaluate: opt(bool), plain: opt(bool), faults: opt(faults)
  },
  evaluate: { modelDir: str, datasetDir: opt(str), backend },
  commitments: { taskFile: str, datasetDir: opt(str), skeletonOnly: opt(bool) },
  tape: { runDir: str, step: nat, out: str, datasetDir: opt(str), datasetProofs: opt(bool), faults: opt(tapeFaults) },
  warm: { taskFile: str, datasetDir: opt(str), datasetRoot: opt(bool) },
  replay: { runDir: str, steps: arr(int), datasetDir: opt(str), checkpointLayout: layout },
  divergence: { runDir: str, datasetDir: opt(str), checkpointLayout: layout },
  'segment-roots': { runDir: str, first: nat, length: nat, datasetDir: opt(str), faults: opt(tapeFaults) }
}

/** A request as the engine receives it. */
export function parseRequest (v: unknown): EngineRequest {
  const o = obj(v, 'request')
  const kind = oneOf(JOB_KINDS)(o.kind, 'request.kind')
  fields(o, `${kind} request`, { id: nat, kind: str, ...JOB_FIELDS[kind] })
  return o as unknown as EngineRequest
}

// ---- results ----

const unavailable = (v: unknown, p: string): unknown => { fields(obj(v, p), p, { step: int, reason: str }); return v }
const divergencePoint = (v: unknown, p: string): unknown => { fields(obj(v, p), p, { step: nat, entry: nat, flat: nat }); return v }
const replayResult = (v: unknown, p: string): unknown => {
  // segment: a replay of a task with roots every m > 1 steps (node/train/replay-many.ts)
  fields(obj(v, p), p, {
    step: int, segment: opt(nat), fromCheckpoint: int, match: bool, expected: str, actual: str, firstMismatch: opt(int), forcedStep: opt(int),
    nanStep: opt(int), seconds: num
  })
  return v
}
const divergenceCheck = (v: unknown, p: string): unknown => {
  const o = obj(v, p)
  fields(o, p, { step: int, ok: bool, reason: str, found: opt(obj), stateNan: opt(obj) })
  if (o.found !== undefined) fields(o.found as Obj, `${p}.found`, { entry: nat, flat: nat, output: nat })
  if (o.stateNan !== undefined) fields(o.stateNan as Obj, `${p}.stateNan`, { t: nat, flat: nat })
  return v
}
const outcome = (key: 'results' | 'check', check: (v: unknown, p: string) => unknown) => (v: unknown, p: string): void => {
  const o = obj(v, p)
  if (o.unavailable !== undefined) fields(o, p, { unavailable })
  else fields(o, p, { [key]: check })
}

const RESULTS: Record<JobKind, (v: unknown, path: string) => void> = {
  train: (v, p) => {
    const o = obj(v, p)
    fields(o, p, {
      outDir: str, programHash: str, backend: obj, steps: nat, completed: bool, resumedFrom: opt(nat), loss: num, seconds: num, samplesPerSec: num,
      cpuSeconds: num, proofRoot: opt(str), finalStateRoot: opt(str), proofWritten: bool, accuracy: opt(num), text: opt(obj),
      checkpoints: arr((c, cp) => { fields(obj(c, cp), cp, { step: nat, manifestHash: str, cid: opt(str) }); return c }),
      divergence: opt(divergencePoint), hashing: opt(obj)
    })
    const b = o.backend as Obj
    str(b.name, `${p}.backend.name`); str(b.runtime, `${p}.backend.runtime`); bool(b.verifiable, `${p}.backend.verifiable`)
  },
  evaluate: (v, p) => fields(obj(v, p), p, {
    accuracy: num, validationLoss: opt(num), testSize: nat, modelDir: str, step: opt(nat), backend: str,
    text: opt((t, tp) => { fields(obj(t, tp), tp, { validationLoss: num, unigramBaseline: num, sample: str }); return t })
  }),
  commitments: (v, p) => fields(obj(v, p), p, { skeletonRoot: str, datasetRoot: str }),
  tape: (v, p) => fields(obj(v, p), p, { step: nat, entries: nat, bytes: nat, fromCheckpoint: nat, stateRootAfter: str, seconds: num }),
  warm: (v, p) => fields(obj(v, p), p, { backend: str, datasetRows: nat, datasetRoot: opt(str) }),
  replay: outcome('results', arr(replayResult)),
  divergence: outcome('check', divergenceCheck),
  'segment-roots': (v, p) => fields(obj(v, p), p, { roots: arr(str), fromCheckpoint: nat, seconds: num })
}

/** A job's result, checked against its kind. */
export function checkResult<K extends JobKind> (kind: K, v: unknown): JobResults[K] {
  RESULTS[kind](v, `${kind} result`)
  return v as JobResults[K]
}

/** A message as a host receives it from an engine process. */
export function parseMessage (v: unknown): EngineMessage {
  const o = obj(v, 'message')
  const type = oneOf(['ready', 'progress', 'checkpoint', 'log', 'done', 'error'] as const)(o.type, 'message.type')
  const p = `${type} message`
  switch (type) {
    case 'ready': fields(o, p, { type: str }); break
    case 'progress': fields(o, p, { type: str, id: nat, step: nat, steps: nat, loss: num, samplesPerSec: num, etaSec: num }); break
    case 'checkpoint': fields(o, p, { type: str, id: nat, step: nat }); break
    case 'log': fields(o, p, { type: str, id: nat, level: oneOf(['info', 'warn'] as const), message: str }); break
    case 'error': fields(o, p, { type: str, id: int, message: str }); break
    case 'done': {
      fields(o, p, { type: str, id: nat, kind: oneOf(JOB_KINDS), result: (r: unknown) => r })
      checkResult(o.kind as JobKind, o.result)
      break
    }
  }
  return o as unknown as EngineMessage
}
