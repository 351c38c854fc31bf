import { decode, encode } from 'cborg'

// Gossip messages are deterministic CBOR maps: {v, type, ...fields}. Each
// schema is checked field by field on receipt; anything unexpected (unknown
// type or version, missing or extra fields, wrong sizes) is rejected, so the
// sender is penalised by gossipsub's scoring.

export const MESSAGE_VERSION = 1
export const MAX_MESSAGE_BYTES = 64 * 1024

export class SchemaError extends Error {
  constructor (message: string) { super(message); this.name = 'SchemaError' }
}

export function encodeMessage (msg: Record<string, unknown>): Uint8Array {
  const bytes = encode(msg)
  if (bytes.length > MAX_MESSAGE_BYTES) throw new SchemaError(`message of ${bytes.length} bytes exceeds ${MAX_MESSAGE_BYTES}`)
  return bytes
}

export function decodeCbor (bytes: Uint8Array): Record<string, unknown> {
  if (bytes.length > MAX_MESSAGE_BYTES) throw new SchemaError(`message of ${bytes.length} bytes exceeds ${MAX_MESSAGE_BYTES}`)
  let v: unknown
  try {
    v = decode(bytes, { strict: true, useMaps: false, rejectDuplicateMapKeys: true })
  } catch (err) {
    throw new SchemaError(`not valid CBOR: ${(err as Error).message}`)
  }
  if (v == null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) throw new SchemaError('expected a CBOR map')
  return v as Record<string, unknown>
}

// --- field checkers ---------------------------------------------------------

export type Check<T> = (v: unknown, field: string) => T

export const str = (max: number, pattern?: RegExp): Check<string> => (v, f) => {
  if (typeof v !== 'string') throw new SchemaError(`${f}: expected a string`)
  if (v.length > max) throw new SchemaError(`${f}: longer than ${max} characters`)
  if (pattern != null && !pattern.test(v)) throw new SchemaError(`${f}: malformed`)
  return v
}

export const hash32: Check<string> = str(66, /^0x[0-9a-f]{64}$/)
export const peerIdStr: Check<string> = str(128, /^(12D3KooW|Qm|16U)[1-9A-HJ-NP-Za-km-z]{20,120}$/)
export const cidStr: Check<string> = str(128, /^b[a-z2-7]{20,120}$/)

export const uint = (max = Number.MAX_SAFE_INTEGER): Check<number> => (v, f) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw new SchemaError(`${f}: expected an integer in [0, ${max}]`)
  return v
}

export const bool: Check<boolean> = (v, f) => {
  if (typeof v !== 'boolean') throw new SchemaError(`${f}: expected a boolean`)
  return v
}

export const bytes = (max: number): Check<Uint8Array> => (v, f) => {
  if (!(v instanceof Uint8Array)) throw new SchemaError(`${f}: expected bytes`)
  if (v.length > max) throw new SchemaError(`${f}: more than ${max} bytes`)
  return v
}

export const list = <T>(item: Check<T>, max: number): Check<T[]> => (v, f) => {
  if (!Array.isArray(v)) throw new SchemaError(`${f}: expected a list`)
  if (v.length > max) throw new SchemaError(`${f}: more than ${max} items`)
  return v.map((x, i) => item(x, `${f}[${i}]`))
}

export const optional = <T>(c: Check<T>): Check<T | undefined> => (v, f) => v === undefined ? undefined : c(v, f)

/** A record's type: fields whose check admits undefined are optional keys (senders may leave them out). */
export type RecordOf<S extends Record<string, Check<unknown>>> =
  { [K in keyof S as undefined extends ReturnType<S[K]> ? never : K]: ReturnType<S[K]> } &
  { [K in keyof S as undefined extends ReturnType<S[K]> ? K : never]?: ReturnType<S[K]> }

export const record = <S extends Record<string, Check<unknown>>>(schema: S): Check<RecordOf<S>> => (v, f) => {
  if (v == null || typeof v !== 'object' || Array.isArray(v)) throw new SchemaError(`${f}: expected a map`)
  const o = v as Record<string, unknown>
  for (const k of Object.keys(o)) if (!(k in schema)) throw new SchemaError(`${f}: unexpected field "${k}"`)
  const out: Record<string, unknown> = {}
  for (const [k, c] of Object.entries(schema)) out[k] = c(o[k], f === '' ? k : `${f}.${k}`)
  return out as RecordOf<S>
}
