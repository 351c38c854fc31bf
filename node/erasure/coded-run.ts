import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fromHex, toHex } from '../../protocols/commit/merkle.js'
import { buildChunkResponses, chunkLeaf, chunkRootOf, codedRoot, codingParams, type ChunkList, type CodedCheckpoint } from '../../protocols/erasure/index.js'
import { encodeChunks } from '../../protocols/erasure/coder.js'
import { validateProof } from '../../protocols/pol/proof.js'
import { cidOf } from '../../protocols/shards/cid.js'
import { atomicWrite, checkpointDir, readJson } from '../train/store.js'
import { checkpointDataFile } from '../../protocols/pol/checkpoint.js'

// The solver's erasure coding of a run (docs/shards.md, "Erasure-coded
// checkpoints"): every checkpoint's state.bin is coded into n chunks, written
// next to it as chunks.bin (the n chunks back to back, each chunkBytes long,
// so that a shard added with that block size has exactly one chunk per block)
// and chunks.json (the chunk list: leaf hashes and block CIDs). The coded root
// over all checkpoints is what commit_proof commits.

export const CHUNKS_FILE = 'chunks.bin'
export const CHUNK_LIST_FILE = 'chunks.json'

export interface CodedRunInfo {
  checkpoints: CodedCheckpoint[]
  codedRoot: Uint8Array
  /** ms spent coding (Reed–Solomon and hashing) */
  ms: number
}

function stateFile (dir: string): string {
  const m = readJson(join(dir, 'manifest.json'), 'checkpoint manifest') as { dataFile?: string }
  return join(dir, checkpointDataFile(m))
}

/** Codes one checkpoint directory (idempotent: an existing coding of the same data is kept). */
export function codeCheckpoint (dir: string, step: number): CodedCheckpoint {
  const file = stateFile(dir)
  const listFile = join(dir, CHUNK_LIST_FILE)
  if (existsSync(listFile) && existsSync(join(dir, CHUNKS_FILE))) {
    const l = readJson(listFile, 'chunk list') as ChunkList
    if (
      l.step === step && l.dataBytes === statSync(file).size && statSync(listFile).mtimeMs >= statSync(file).mtimeMs
    ) return { step, dataBytes: l.dataBytes, chunkRoot: fromHex(l.chunkRoot) }
  }
  const data = new Uint8Array(readFileSync(file))
  const { params, chunks } = encodeChunks(data)
  const leaves = chunks.map(chunkLeaf)
  const chunkRoot = chunkRootOf(leaves)
  const all = new Uint8Array(params.total * params.chunkBytes)
  chunks.forEach((c, i) => all.set(c, i * params.chunkBytes))
  atomicWrite(join(dir, CHUNKS_FILE), all)
  const list: ChunkList = {
    version: 1, step, dataBytes: data.length, chunkRoot: toHex(chunkRoot), leaves: leaves.map(toHex), blocks: chunks.map(c => cidOf(c).toString())
  }
  atomicWrite(join(dir, CHUNK_LIST_FILE), JSON.stringify(list))
  return { step, dataBytes: data.length, chunkRoot }
}

/** Codes every checkpoint of a run directory (proof.json lists them); returns the coded root. */
export function codeRun (runDir: string): CodedRunInfo {
  const t0 = performance.now()
  const proof = validateProof(readJson(join(runDir, 'proof.json'), 'proof'))
  const checkpoints = proof.checkpoints.map(c => codeCheckpoint(checkpointDir(runDir, c.step), c.step))
  return { checkpoints, codedRoot: codedRoot(checkpoints), ms: performance.now() - t0 }
}

/** codeRun with the coding in a pool's worker threads (checkpoints already coded cost a read of their chunk list). */
export async function codeRunWith (runDir: string, pool: { code: (dir: string, step: number) => Promise<CodedCheckpoint> }): Promise<CodedRunInfo> {
  const t0 = performance.now()
  const proof = validateProof(readJson(join(runDir, 'proof.json'), 'proof'))
  const checkpoints = await Promise.all(proof.checkpoints.map(async c => await pool.code(checkpointDir(runDir, c.step), c.step)))
  return { checkpoints, codedRoot: codedRoot(checkpoints), ms: performance.now() - t0 }
}

/** The n chunks of a coded checkpoint, from its chunks.bin. */
export function readChunks (runDir: string, step: number): { list: ChunkList, chunks: Uint8Array[] } {
  const dir = checkpointDir(runDir, step)
  const list = readJson(join(dir, CHUNK_LIST_FILE), 'chunk list') as ChunkList
  const { total, chunkBytes } = codingParams(list.dataBytes)
  const all = new Uint8Array(readFileSync(join(dir, CHUNKS_FILE)))
  if (all.length !== total * chunkBytes) throw new Error(`${CHUNKS_FILE} of step ${step} has ${all.length} bytes, expected ${total * chunkBytes}`)
  return { list, chunks: Array.from({ length: total }, (_, i) => all.subarray(i * chunkBytes, (i + 1) * chunkBytes)) }
}

/** The solver's answer parts to a chunk-sample request, from its run directory (throws when it cannot answer). */
export function chunkResponsesFromRun (runDir: string, step: number, seed: Uint8Array, posted = 0n): Uint8Array[] {
  const info = codeRun(runDir)
  const index = info.checkpoints.findIndex(c => c.step === step)
  if (index < 0) throw new Error(`the run has no checkpoint at step ${step}`)
  return buildChunkResponses({ checkpoints: info.checkpoints, index, chunks: readChunks(runDir, step).chunks }, seed, posted)
}
