import { bytesEqual, fromHex, merkleRoot, sha256, toHex } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { tensorCommitmentRoot, type CommitScheme } from '../commit/scheme.js'
import { sizeOf, dtypeBytes, type DType, type TensorData, valuesFromBytes } from '../commit/tensor.js'
import { canonicalHash, canonicalJson } from '../program/canonical-json.js'

// Checkpoint manifest (version 1): describes one file holding the canonical
// little-endian bytes of every state tensor, concatenated in state order.
// manifestHash = sha256 of the manifest's canonical JSON; that is what the
// proof-of-learning references (CIDs of the shards are added later).
// A chunked program's manifest says so (`stateCommitment: 'chunked'`): its
// tensors' `root`s and its state root are chunked commitments
// (docs/training.md "Chunked roots: design"); a row + column one has no such
// field, so its manifest and hash are what they always were.

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
  /** absent: row + column commitments */
  stateCommitment?: 'chunked'
}

/**
 * How a tensor's commitment root is computed. Callers may pass a faster
 * implementation of the same function (node/train/fast-commit.ts); it must give
 * the value protocols/commit gives, which that module's tests check.
 */
export type TensorRootFn = (t: TensorData) => Uint8Array
export interface CommitOptions {
  /**
   * The program's state commitment (absent: row + column). A manifest must
   * declare the same one: a checkpoint under the other scheme is refused.
   */
  stateCommitment?: CommitScheme
  /** a faster implementation of the tensor commitment root under `stateCommitment` */
  tensorRoot?: TensorRootFn
  /**
   * false: check only the manifest and the data's sha256, not each tensor's
   * commitment nor the state root. For a caller that hashes the loaded state
   * itself anyway (a verifier's replay compares the state root it reaches) and
   * runs the full check only when that disagrees.
   */
  commitments?: boolean
}
const referenceRoot = (c: CommitScheme): TensorRootFn => t => tensorCommitmentRoot(c, t)

/** The state root from the tensors' commitment roots (protocols/commit stateRoot, each tensor committed once). */
function rootOf (tensorRoots: readonly Uint8Array[], step: number): Uint8Array {
  return merkleRoot([...tensorRoots, stepLeaf(step)])
}

/** `data` may be a view of the tensors' own buffer (see backToBack): write or copy it before they change. */
export function buildCheckpoint (programHash: string, step: number, names: readonly string[], tensors: readonly TensorData[], dataFile = 'state.bin', o: CommitOptions = {}): { manifest: CheckpointManifest, data: Uint8Array } {
  if (names.length !== tensors.length) throw new Error('one name per state tensor')
  const scheme = o.stateCommitment ?? 'rowcol'
  const commit = o.tensorRoot ?? referenceRoot(scheme)
  let off = 0
  const roots = tensors.map(commit)
  const entries: CheckpointTensor[] = tensors.map((t, i) => {
    const byteLength = sizeOf(t.shape) * dtypeBytes(t.dtype)
    const e = { name: names[i], shape: [...t.shape], dtype: t.dtype, offset: off, byteLength, root: toHex(roots[i]) }
    off += byteLength
    return e
  })
  let data = backToBack(tensors, entries, off)
  if (data === undefined) {
    const out = new Uint8Array(off)
    tensors.forEach((t, i) => out.set(new Uint8Array(t.values.buffer, t.values.byteOffset, entries[i].byteLength), entries[i].offset))
    data = out
  }
  const manifest: CheckpointManifest = {
    version: 1, programHash, step, stateRoot: toHex(rootOf(roots, step)), dataFile, dataSha256: toHex(sha256(data)), dataBytes: off, tensors: entries,
    ...(scheme === 'chunked' ? { stateCommitment: 'chunked' as const } : {})
  }
  return { manifest, data }
}

/**
 * The tensors' bytes as they are when they already lie back to back in state
 * order in one buffer (a training loop's state slot): the data is then a view
 * of them, not a copy, valid while they are.
 */
function backToBack (tensors: readonly TensorData[], entries: readonly CheckpointTensor[], bytes: number): Uint8Array | undefined {
  if (tensors.length === 0) return undefined
  const first = tensors[0].values
  const ok = tensors.every((t, i) =>
    t.values.buffer === first.buffer && t.values.byteOffset === first.byteOffset + entries[i].offset && t.values.byteLength === entries[i].byteLength)
  return ok ? new Uint8Array(first.buffer, first.byteOffset, bytes) : undefined
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
export function openCheckpoint (
  manifest: unknown, data: Uint8Array, expect?: { programHash?: string, manifestHash?: string }, o: CommitOptions = {}
): { manifest: CheckpointManifest, tensors: TensorData[] } {
  const scheme = o.stateCommitment ?? 'rowcol'
  const commit = o.tensorRoot ?? referenceRoot(scheme)
  const m = manifest as CheckpointManifest
  if (typeof m !== 'object' || m === null || m.version !== CHECKPOINT_VERSION) throw new CheckpointError('not a version 1 checkpoint manifest')
  // its roots are checked under the program's scheme, never under the one the manifest picks
  const declared = m.stateCommitment === undefined ? 'rowcol' : m.stateCommitment === 'chunked' ? 'chunked' : undefined
  if (declared !== scheme) throw new CheckpointError(`checkpoint commits its state ${declared === undefined ? `under an unknown scheme ${String(m.stateCommitment)}` : `under ${declared}`}, the program under ${scheme}`)
  if (!Number.isInteger(m.step) || m.step < 0 || !Array.isArray(m.tensors)) throw new CheckpointError('malformed checkpoint manifest')
  if (expect?.programHash !== undefined && m.programHash !== expect.programHash) throw new CheckpointError(`checkpoint belongs to program ${m.programHash}, not ${expect.programHash}`)
  if (expect?.manifestHash !== undefined && manifestHash(m) !== expect.manifestHash) throw new CheckpointError(`checkpoint manifest hash ${manifestHash(m)} differs from the referenced ${expect.manifestHash}`)
  if (data.length !== m.dataBytes) throw new CheckpointError(`checkpoint data is ${data.length} bytes, manifest says ${m.dataBytes}`)
  if (toHex(sha256(data)) !== m.dataSha256) throw new CheckpointError('checkpoint data hash mismatch (corrupt file?)')
  const roots: Uint8Array[] = []
  const tensors: TensorData[] = m.tensors.map(e => {
    if (e.offset < 0 || e.offset + e.byteLength > data.length || e.byteLength !== sizeOf(e.shape) * dtypeBytes(e.dtype)) throw new CheckpointError(`tensor ${e.name}: bad extent`)
    const t: TensorData = { shape: e.shape, dtype: e.dtype, values: valuesFromBytes(e.dtype, data.subarray(e.offset, e.offset + e.byteLength)) }
    if (o.commitments === false) return t
    const root = commit(t)
    if (toHex(root) !== e.root) throw new CheckpointError(`tensor ${e.name}: commitment mismatch`)
    roots.push(root)
    return t
  })
  if (o.commitments !== false && !bytesEqual(rootOf(roots, m.step), fromHex(m.stateRoot))) throw new CheckpointError('checkpoint state root mismatch')
  return { manifest: m, tensors }
}

/**
 * The file a checkpoint's data is in, next to its manifest.json: the manifest's
 * `dataFile` when it is a plain name (letters, digits, `_.-`, no leading dot, so
 * no `..` and no directory), else `state.bin`. The manifest comes from the
 * solver: a name joined to a directory unchecked would have its fetcher write
 * the solver's bytes anywhere the peer can write.
 */
export function checkpointDataFile (m: { dataFile?: unknown }): string {
  return typeof m.dataFile === 'string' && /^[\w-][\w.-]{0,127}$/.test(m.dataFile) ? m.dataFile : 'state.bin'
}
