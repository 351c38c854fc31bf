/** A JSON-RPC error with its code, as the dev chain's RPC methods throw it. */
export class RpcError extends Error {
  constructor (readonly code: number, message: string, readonly data?: unknown) { super(message) }
}
