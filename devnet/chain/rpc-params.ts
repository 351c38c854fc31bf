import { isHex } from '@polkadot/util'
import { RpcError } from './rpc-errors.js'

// Checks of JSON-RPC parameters: a bad one is an Invalid params error, not a crash.

export const invalidParams = (msg: string): RpcError => new RpcError(-32602, `Invalid params: ${msg}`)

export function hexParam (v: unknown, what: string, bytes?: number): string {
  if (typeof v !== 'string' || !isHex(v) || v.length % 2 !== 0) throw invalidParams(`${what} must be 0x-prefixed hex`)
  if (bytes !== undefined && v.length !== 2 + 2 * bytes) throw invalidParams(`${what} must be ${bytes} bytes`)
  return v.toLowerCase()
}
export function optHash (v: unknown): string | undefined {
  return v === undefined || v === null ? undefined : hexParam(v, 'block hash', 32)
}
