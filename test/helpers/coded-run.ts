import { u8aToHex } from '@polkadot/util'
import { merkleRoot, sha256, stateRoot, type TensorData } from '../../protocols/commit/index.js'
import { buildCheckpoint } from '../../protocols/pol/checkpoint.js'
import { chunkLeaf, chunkRootEntry, chunkRootOf, codedRoot, type CodedCheckpoint } from '../../protocols/erasure/index.js'
import { encodeChunks } from '../../protocols/erasure/coder.js'

// A run whose checkpoints are erasure-coded like a solver's: the state of an
// Adam MLP 784-128-10 (weights and both moment slots, ~1.2 MB per
// checkpoint, so 256 chunks of ~9.5 KB) at steps 0, 5 and 10 of a 10-step task.

export const STEPS = 10
export const EVERY = 5
const SHAPES = [[784, 128], [128], [128, 10], [10]]

function mlpState (seed: number): TensorData[] {
  const out: TensorData[] = []
  for (let slot = 0; slot < 3; slot++) {
    for (const shape of SHAPES) {
      const n = shape.reduce((a, b) => a * b, 1)
      const values = new Float32Array(n)
      let x = (seed * 7919 + slot * 104729 + n) >>> 0
      for (let i = 0; i < n; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; values[i] = (x / 2 ** 32 - 0.5) * (slot === 0 ? 0.1 : 0.001) }
      out.push({ shape, dtype: 'float32', values })
    }
  }
  return out
}

export interface CodedRun {
  /** state roots of steps 0..STEPS (checkpoint steps are true state roots) */
  roots: Uint8Array[]
  proofRoot: string
  finalStateRoot: string
  checkpoints: CodedCheckpoint[]
  /** per checkpoint: its state.bin and its n chunks */
  data: Uint8Array[]
  chunks: Uint8Array[][]
  codedRoot: Uint8Array
  /** commit_proof's checkpoint list: the coded-root entry, hex of its UTF-8 bytes */
  entries: string[]
}

let cached: CodedRun | undefined

export function codedRun (): CodedRun {
  if (cached !== undefined) return cached
  const steps = [0, 5, 10]
  const roots = Array.from({ length: STEPS + 1 }, (_, s) => sha256(Uint8Array.of(s)))
  const data: Uint8Array[] = []
  const chunks: Uint8Array[][] = []
  const checkpoints: CodedCheckpoint[] = []
  for (const step of steps) {
    const state = mlpState(step + 1)
    roots[step] = stateRoot(state, step)
    const ck = buildCheckpoint('00'.repeat(32), step, state.map((_, i) => `t${i}`), state)
    const coded = encodeChunks(ck.data)
    data.push(ck.data)
    chunks.push(coded.chunks)
    checkpoints.push({ step, dataBytes: ck.data.length, chunkRoot: chunkRootOf(coded.chunks.map(chunkLeaf)) })
  }
  const root = codedRoot(checkpoints)
  cached = {
    roots,
    proofRoot: u8aToHex(merkleRoot(roots)),
    finalStateRoot: u8aToHex(roots[STEPS]),
    checkpoints,
    data,
    chunks,
    codedRoot: root,
    entries: [u8aToHex(new TextEncoder().encode(chunkRootEntry(root)))]
  }
  return cached
}
