import { CID } from 'multiformats/cid'
import { MAX_BLOCK_BYTES } from './cid.js'

// Wire protocol for the shard exchange. One libp2p stream per (fetcher,
// provider) pair carries length-prefixed frames in both directions:
//   request  = varint-length ‖ u32 id (BE) ‖ CID bytes
//   response = varint-length ‖ u8 status ‖ u32 id (BE) ‖ payload
// The provider answers requests in the order received, so a fetcher can
// pipeline several requests per stream (that is what makes it fast).
// Payload: the block's bytes (OK), nothing (NOT_FOUND), a UTF-8 reason (ERROR).

export const SHARD_PROTOCOL = '/proofswarm/shards/1.0.0'

/** A request is one id and one CID (~40 bytes); anything larger is refused. */
export const MAX_REQUEST_BYTES = 256
export const RESPONSE_HEADER_BYTES = 5
export const MAX_RESPONSE_BYTES = RESPONSE_HEADER_BYTES + MAX_BLOCK_BYTES
/** Requests a fetcher may have outstanding on one stream. */
export const MAX_PIPELINE = 8
export const MAX_ERROR_TEXT = 200

export const Status = { OK: 0, NOT_FOUND: 1, ERROR: 2 } as const
export type StatusCode = typeof Status[keyof typeof Status]

export interface BlockRequest { id: number, cid: CID }
export interface BlockResponse { status: StatusCode, id: number, payload: Uint8Array }

export function encodeRequest (r: BlockRequest): Uint8Array {
  const c = r.cid.bytes
  const out = new Uint8Array(4 + c.length)
  new DataView(out.buffer).setUint32(0, r.id >>> 0)
  out.set(c, 4)
  return out
}

export function decodeRequest (bytes: Uint8Array): BlockRequest {
  if (bytes.length > MAX_REQUEST_BYTES) throw new Error(`request over ${MAX_REQUEST_BYTES} bytes`)
  if (bytes.length < 5) throw new Error('request too short')
  const id = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0)
  let cid: CID
  try { cid = CID.decode(bytes.subarray(4)) } catch { throw new Error('request carries an invalid CID') }
  return { id, cid }
}

/** Header only: the payload is sent as a second chunk so 1 MiB blocks are not copied. */
export function encodeResponseHeader (status: StatusCode, id: number): Uint8Array {
  const out = new Uint8Array(RESPONSE_HEADER_BYTES)
  out[0] = status
  new DataView(out.buffer).setUint32(1, id >>> 0)
  return out
}

export function decodeResponse (bytes: Uint8Array): BlockResponse {
  if (bytes.length < RESPONSE_HEADER_BYTES) throw new Error('response too short')
  if (bytes.length > MAX_RESPONSE_BYTES) throw new Error(`response over ${MAX_RESPONSE_BYTES} bytes`)
  const status = bytes[0]
  if (status !== Status.OK && status !== Status.NOT_FOUND && status !== Status.ERROR) throw new Error(`unknown response status ${status}`)
  const id = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1)
  return { status: status as StatusCode, id, payload: bytes.subarray(RESPONSE_HEADER_BYTES) }
}

export function errorText (payload: Uint8Array): string {
  return new TextDecoder().decode(payload.subarray(0, MAX_ERROR_TEXT)).replace(/[^\x20-\x7e]/g, '?')
}
