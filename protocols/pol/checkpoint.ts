import { bytesEqual, fromHex, sha256, toHex } from '../commit/merkle.js'
import { stateRoot } from '../commit/state.js'
import { commitTensor, sizeOf, dtypeBytes, type DType, type TensorData, valuesFromBytes } from '../commit/tensor.js'
import { canonicalHash, canonicalJson } from '../program/canonical-json.js'

// Checkpoint manifest (version 1): describes one file holding the canonical
// little-endian bytes of every state tensor, concatenated in state order.
// manifestHash = sha256 of the manifest's canonical JSON; that is what the
// proof-of-learning references (CIDs of the shards are added later).

export const CHECKPOINT_VERSION = 1

export interface CheckpointTensor { name: string, shape: number[], dtype: DType, offset: number, byteLength: number, root: string }
export interface CheckpointManifest {
  version: 1
  programHash: string
  step: number
  stateRoot: string
  dataFile: string
  dataSha256: string
  dataBytes: number
  tensors: CheckpointTensor[]
}

export function buildCheckpoint (programHash: string, step: number, names: readonly string[], tensors: readonly TensorData[], dataFile = 'state.bin'): { manifest: CheckpointManifest, data: Uint8Array } {
  if (names.length !== tensors.length) throw new Error('one name per state tensor')
  let off = 0
  const entries: CheckpointTensor[] = tensors.map((t, i) => {
    const byteLength = sizeOf(t.shape) * dtypeBytes(t.dtype)
    const e = { name: names[i], shape: [...t.shape], dtype: t.dtype, offset: off, byteLength, root: toHex(commitTensor(t).root) }
    off += byteLength
    return e
  })
  const data = new Uint8Array(off)
  tensors.forEach((t, i) => data.set(new Uint8Array(t.values.buffer, t.values.byteOffset, entries[i].byteLength), entries[i].offset))
  const manifest: CheckpointManifest = {
    version: 1, programHash, step, stateRoot: toHex(stateRoot(tensors, step)), dataFile, dataSha256: toHex(sha256(data)), dataBytes: off, tensors: entries
  }
  return { manifest, data }
}

export function manifestBytes (m: CheckpointManifest): Uint8Array {
  return new TextEncoder().encode(canonicalJson(m))
}

export function manifestHash (m: CheckpointManifest): string {
  return canonicalHash(m)
}

export class CheckpointError extends Error {
  constructor (message: string) { super(message); this.name = 'CheckpointError' }
}

/** Validates a manifest + data against each other; returns the state tensors. */
export function openCheckpoint (manifest: unknown, data: Uint8Array, expect?: { programHash?: string, manifestHash?: string }): { manifest: CheckpointManifest, tensors: TensorData[] } {
  const m = manifest as CheckpointManifest
  if (typeof m !== 'object' || m === null || m.version !== CHECKPOINT_VERSION) throw new CheckpointError('not a version 1 checkpoint manifest')
  if (!Number.isInteger(m.step) || m.step < 0 || !Array.isArray(m.tensors)) throw new CheckpointError('malformed checkpoint manifest')
  if (expect?.programHash !== undefined && m.programHash !== expect.programHash) throw new CheckpointError(`checkpoint belongs to program ${m.programHash}, not ${expect.programHash}`)
  if (expect?.manifestHash !== undefined && manifestHash(m) !== expect.manifestHash) throw new CheckpointError(`checkpoint manifest hash ${manifestHash(m)} differs from the referenced ${expect.manifestHash}`)
  if (data.length !== m.dataBytes) throw new CheckpointError(`checkpoint data is ${data.length} bytes, manifest says ${m.dataBytes}`)
  if (toHex(sha256(data)) !== m.dataSha256) throw new CheckpointError('checkpoint data hash mismatch (corrupt file?)')
  const tensors: TensorData[] = m.tensors.map(e => {
    if (e.offset < 0 || e.offset + e.byteLength > data.length || e.byteLength !== sizeOf(e.shape) * dtypeBytes(e.dtype)) throw new CheckpointError(`tensor ${e.name}: bad extent`)
    const t: TensorData = { shape: e.shape, dtype: e.dtype, values: valuesFromBytes(e.dtype, data.subarray(e.offset, e.offset + e.byteLength)) }
    if (toHex(commitTensor(t).root) !== e.root) throw new CheckpointError(`tensor ${e.name}: commitment mismatch`)
    return t
  })
  if (!bytesEqual(stateRoot(tensors, m.step), fromHex(m.stateRoot))) throw new CheckpointError('checkpoint state root mismatch')
  return { manifest: m, tensors }
}
