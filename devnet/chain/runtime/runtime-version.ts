import { compactToU8a, stringToU8a, u8aConcat, hexToU8a } from '@polkadot/util'

// The runtime's version: served by state_getRuntimeVersion and, as Substrate
// does, as System's `Version` constant in the metadata (clients such as dedot
// read it from there).

export const RUNTIME_VERSION = {
  specName: 'proofswarm-dev',
  implName: 'proofswarm-ts',
  authoringVersion: 1,
  specVersion: 1,
  implVersion: 1,
  // the Metadata runtime API (v2), served by state_call (devnet/chain/runtime-api.ts)
  apis: [['0x37e397fc7c91f5e4', 2]] as Array<[string, number]>,
  transactionVersion: 1,
  stateVersion: 1
}

const u32 = (n: number): Uint8Array => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n, true); return b }
const text = (s: string): Uint8Array => { const b = stringToU8a(s); return u8aConcat(compactToU8a(b.length), b) }

/** SCALE of sp_version::RuntimeVersion (the `Version` constant). */
export function encodeRuntimeVersion (v: typeof RUNTIME_VERSION = RUNTIME_VERSION): Uint8Array {
  return u8aConcat(
    text(v.specName), text(v.implName), u32(v.authoringVersion), u32(v.specVersion), u32(v.implVersion),
    compactToU8a(v.apis.length), ...v.apis.flatMap(([id, ver]) => [hexToU8a(id), u32(ver)]),
    u32(v.transactionVersion), new Uint8Array([v.stateVersion])
  )
}
