import { compactToU8a, hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { RpcError } from './rpc-errors.js'

// The runtime APIs clients call through `state_call` when they connect. Only
// the Metadata API (v2) is implemented: @polkadot/api and other Substrate
// clients fetch metadata through it and warn when a chain does not offer it.
// The dev chain's metadata is v14. The runtime version's `apis` lists the
// Metadata API (blake2_64("Metadata") = 0x37e397fc7c91f5e4, version 2).

export const METADATA_VERSION = 14

const u32le = (n: number): Uint8Array => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n, true); return b }

/** The SCALE-encoded result of runtime API `method` on `data` (hex in, hex out). */
export function runtimeCall (method: string, data: string, metadataHex: string): string {
  const metadata = hexToU8a(metadataHex)
  const opaque = (): Uint8Array => u8aConcat(compactToU8a(metadata.length), metadata)
  switch (method) {
    case 'Metadata_metadata':
      return u8aToHex(opaque())
    case 'Metadata_metadata_versions':
      return u8aToHex(u8aConcat(compactToU8a(1), u32le(METADATA_VERSION)))
    case 'Metadata_metadata_at_version': {
      const arg = hexToU8a(data)
      if (arg.length !== 4) throw new RpcError(-32602, 'Invalid params: Metadata_metadata_at_version takes a u32')
      const v = new DataView(arg.buffer, arg.byteOffset, 4).getUint32(0, true)
      // Option<OpaqueMetadata>: None for a version this chain does not have
      return v === METADATA_VERSION ? u8aToHex(u8aConcat(Uint8Array.of(1), opaque())) : '0x00'
    }
    default:
      throw new RpcError(-32000, `Client error: Execution failed: Other: Exported method ${method.slice(0, 100)} is not found`)
  }
}
