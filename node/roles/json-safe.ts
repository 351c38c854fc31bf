/** JSON-able copy: bigints become decimal strings. */
export function jsonSafe (v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x) => typeof x === 'bigint' ? x.toString() : x))
}
