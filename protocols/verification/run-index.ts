// The run index: the one document a solver publishes (as a shard) and commits
// on chain by CID. It names every other artefact of the run by CID, so a
// verifier anywhere can rebuild the run directory from the swarm, and every
// byte it fetches is bound to the on-chain commitment.

export const RUN_INDEX_VERSION = 1

export interface RunIndex {
  version: 1
  taskId: number
  programHash: string
  proofRoot: string
  /** task.json (the program) */
  program: string
  /** proof.json (per-step state roots) */
  proof: string
  /** the trained model (tfjs layers JSON + weights), for the submitter */
  model?: string
  /** checkpoint k: manifest.json and state.bin, and its erasure coding (protocols/erasure) */
  checkpoints: Array<{ step: number, manifest: string, data: string, coded?: CodedEntry }>
}

/** An erasure-coded checkpoint: what the coded root commits (dataBytes, chunkRoot) and where its chunks are. */
export interface CodedEntry {
  dataBytes: number
  /** hex chunk root */
  chunkRoot: string
  /** CID of chunks.json (the chunk list) */
  list: string
  /** CID of chunks.bin, a shard with one chunk per block */
  chunks: string
}

const CID = /^b[a-z2-7]{20,120}$/
const HEX = /^(0x)?[0-9a-f]{64}$/

export function validateRunIndex (v: unknown): RunIndex {
  const r = v as RunIndex
  const bad = (why: string): never => { throw new Error(`invalid run index: ${why}`) }
  if (typeof r !== 'object' || r === null || r.version !== RUN_INDEX_VERSION) bad('not a version 1 run index')
  if (!Number.isInteger(r.taskId) || r.taskId < 0) bad('taskId')
  if (!HEX.test(String(r.programHash)) || !HEX.test(String(r.proofRoot))) bad('programHash/proofRoot must be 32-byte hex')
  if (!CID.test(String(r.proof)) || !CID.test(String(r.program))) bad('proof/program CID')
  if (r.model !== undefined && !CID.test(String(r.model))) bad('model CID')
  if (!Array.isArray(r.checkpoints) || r.checkpoints.length > 100_000) bad('checkpoints')
  let last = -1
  for (const c of r.checkpoints) {
    if (!Number.isInteger(c.step) || c.step <= last) bad('checkpoint steps must increase')
    if (!CID.test(String(c.manifest)) || !CID.test(String(c.data))) bad(`checkpoint ${c.step} CIDs`)
    if (c.coded !== undefined) {
      const x = c.coded
      if (typeof x !== 'object' || x === null || !Number.isSafeInteger(x.dataBytes) || x.dataBytes < 1 || !/^[0-9a-f]{64}$/.test(String(x.chunkRoot)) || !CID.test(String(x.list)) || !CID.test(String(x.chunks))) bad(`checkpoint ${c.step} coding`)
    }
    last = c.step
  }
  return r
}

/** How the run index CID is written into the chain's checkpoint list. */
export const RUN_INDEX_PREFIX = 'run-index:'

/** A committed checkpoint entry as the chain holds it (hex of its UTF-8 text) → the text. */
export function decodeCheckpointEntry (hex: string): string {
  return Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex').toString('utf8')
}

/** The run index's CID among a task's committed checkpoint entries (undefined: none committed). */
export function runIndexCidOf (task: { checkpoints: readonly string[] }): string | undefined {
  for (const c of task.checkpoints) {
    const s = decodeCheckpointEntry(c)
    if (s.startsWith(RUN_INDEX_PREFIX)) return s.slice(RUN_INDEX_PREFIX.length)
  }
  return undefined
}
