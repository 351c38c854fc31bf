import { sha256, toHex } from '../commit/merkle.js'

// Canonical JSON: object keys sorted by UTF-16 code units, no whitespace,
// numbers as JavaScript prints them, undefined members dropped. Used for the
// program hash and checkpoint manifests so every peer hashes the same bytes.
export function canonicalJson (value: unknown): string {
  return enc(value, '$')
}

function enc (v: unknown, path: string): string {
  if (v === null) return 'null'
  switch (typeof v) {
    case 'boolean': return v ? 'true' : 'false'
    case 'string': return JSON.stringify(v)
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError(`${path}: non-finite number ${v} cannot be encoded`)
      return JSON.stringify(v)
    case 'object': {
      if (Array.isArray(v)) return '[' + v.map((x, i) => enc(x === undefined ? null : x, `${path}[${i}]`)).join(',') + ']'
      const keys = Object.keys(v as object).filter(k => (v as Record<string, unknown>)[k] !== undefined).sort()
      return '{' + keys.map(k => JSON.stringify(k) + ':' + enc((v as Record<string, unknown>)[k], `${path}.${k}`)).join(',') + '}'
    }
    default: throw new TypeError(`${path}: cannot encode a ${typeof v}`)
  }
}

export function canonicalHash (value: unknown): string {
  return toHex(sha256(new TextEncoder().encode(canonicalJson(value))))
}
