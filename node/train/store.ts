import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { sha256, toHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { buildCheckpoint, checkpointDataFile, manifestBytes, openCheckpoint, type CheckpointManifest, type CommitOptions } from '../../protocols/pol/checkpoint.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { fastTensorRootUnder } from './fast-commit.js'
import { validateProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import { validateProgram, type DatasetRef, type TaskProgram } from '../../protocols/program/program.js'

// On-disk layout of a training run directory:
//   task.json                       the program
//   proof.json                      proof-of-learning (protocols/pol)
//   state-roots.bin                 32-byte state roots so far (for --resume)
//   checkpoints/step-00000100/      manifest.json + state.bin
//   model/model.json, weights.bin   tfjs layers-model format
//   run.json                        local facts (backend, dataset dir, timings)

export const MAX_JSON_BYTES = 64 << 20

export function atomicWrite (file: string, data: Uint8Array | string): void {
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.tmp-${process.pid}`
  writeFileSync(tmp, data)
  renameSync(tmp, file)
}

export function readJson (file: string, what: string): unknown {
  if (!existsSync(file)) throw new Error(`${what} not found: ${file}`)
  const size = statSync(file).size
  if (size > MAX_JSON_BYTES) throw new Error(`${what} ${file} is too large (${size} bytes)`)
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    throw new Error(`${what} ${file} is not valid JSON: ${(e as Error).message}`)
  }
}

export function checkpointDir (runDir: string, step: number): string {
  return join(runDir, 'checkpoints', `step-${String(step).padStart(8, '0')}`)
}

// checkpoints are committed with the fast implementation of protocols/commit
// (same roots; test/unit/train/fast-commit.test.ts): the reference one costs ~5× more per checkpoint
const fast = (c: CommitScheme = 'rowcol'): CommitOptions => ({ stateCommitment: c, tensorRoot: fastTensorRootUnder(c) })

/**
 * `o.reference`: commit with protocols/commit itself (a cross-check of the fast implementation);
 * `o.tensorRoot`: the tensors' commitment roots (under `o.stateCommitment`), when the caller has them already;
 * `o.stateCommitment`: the program's (absent: row + column)
 */
export function writeCheckpoint (
  runDir: string, programHash: string, step: number, names: readonly string[], tensors: readonly TensorData[],
  o: { reference?: boolean, tensorRoot?: CommitOptions['tensorRoot'], stateCommitment?: CommitScheme } = {}
): { manifest: CheckpointManifest, manifestHash: string } {
  const c = o.stateCommitment ?? 'rowcol'
  const { manifest, data } = buildCheckpoint(programHash, step, names, tensors, 'state.bin', o.reference === true ? { stateCommitment: c } : { stateCommitment: c, tensorRoot: o.tensorRoot ?? fastTensorRootUnder(c) })
  const dir = checkpointDir(runDir, step)
  atomicWrite(join(dir, manifest.dataFile), data)
  const bytes = manifestBytes(manifest)
  atomicWrite(join(dir, 'manifest.json'), bytes)
  // manifestHash is the sha256 of exactly these canonical bytes: not encoded a second time
  return { manifest, manifestHash: toHex(sha256(bytes)) }
}

/** `o.commitments: false`: skip the per-tensor commitments and state root (see CommitOptions); `o.stateCommitment`: the program's */
export function readCheckpoint (
  runDir: string, step: number, expect?: { programHash?: string, manifestHash?: string }, o: { commitments?: boolean, stateCommitment?: CommitScheme } = {}
): { manifest: CheckpointManifest, tensors: TensorData[] } {
  const dir = checkpointDir(runDir, step)
  const m = readJson(join(dir, 'manifest.json'), `checkpoint manifest of step ${step}`) as CheckpointManifest
  const file = join(dir, checkpointDataFile(m))
  if (!existsSync(file)) throw new Error(`checkpoint data missing: ${file}`)
  return openCheckpoint(m, new Uint8Array(readFileSync(file)), expect, { ...fast(o.stateCommitment), commitments: o.commitments })
}

export function listCheckpoints (runDir: string): number[] {
  const d = join(runDir, 'checkpoints')
  if (!existsSync(d)) return []
  return readdirSync(d).map(n => /^step-(\d{8})$/.exec(n)).filter((m): m is RegExpExecArray => m !== null)
    .map(m => Number(m[1])).filter(s => existsSync(join(checkpointDir(runDir, s), 'manifest.json'))).sort((a, b) => a - b)
}

/**
 * state-roots.bin written as the run goes: at each checkpoint the roots since
 * the previous one, at their offsets (root s at s × 32), into one open file.
 * (It was rewritten whole at every checkpoint: O(steps² / k) bytes and, on
 * the training thread, a wait on every root so far.) A resumed run starts from
 * the latest checkpoint whose root the file holds (run.ts), so roots cut
 * short by a crash are recomputed; `close` trims the file to the run's roots.
 */
export class RootsFile {
  private readonly fd: number
  private end = 0
  private closed = false

  /** `keep`: roots already in the file to keep (a resumed run); the rest is overwritten. */
  constructor (runDir: string, keep = 0) {
    const f = join(runDir, 'state-roots.bin')
    this.fd = openSync(f, existsSync(f) && keep > 0 ? 'r+' : 'w')
    this.end = keep
  }

  /** Writes roots `from`, `from + 1`, … */
  write (from: number, roots: readonly Uint8Array[]): void {
    // a checkpoint settling after an aborted run closed the file: its descriptor may be another file's by now
    if (roots.length === 0 || this.closed) return
    const b = Buffer.allocUnsafe(roots.length * 32)
    roots.forEach((r, i) => b.set(r, i * 32))
    let n = 0
    while (n < b.length) n += writeSync(this.fd, b, n, b.length - n, from * 32 + n)
    this.end = Math.max(this.end, from + roots.length)
  }

  close (): void {
    if (this.closed) return
    this.closed = true
    try { ftruncateSync(this.fd, this.end * 32) } finally { closeSync(this.fd) }
  }
}

export function readRoots (runDir: string): Uint8Array[] {
  const f = join(runDir, 'state-roots.bin')
  if (!existsSync(f)) return []
  const b = new Uint8Array(readFileSync(f))
  const out: Uint8Array[] = []
  for (let i = 0; i + 32 <= b.length; i += 32) out.push(b.slice(i, i + 32))
  return out
}

export function readProgram (file: string): TaskProgram {
  const p = validateProgram(readJson(file, 'task file'))
  const { info: _i, ...program } = p
  return program
}

/** `rootEvery`: the program's m, which the proof's spacing must be */
export function readProof (runDir: string, rootEvery?: number): ProofOfLearning {
  return validateProof(readJson(join(runDir, 'proof.json'), 'proof'), rootEvery)
}

/**
 * Where a node keeps a dataset it fetched from the swarm: named by the dataset's content hash, and only
 * ever made of a fetch whose content hash that is (fetched-dataset.ts), so it is that dataset or nothing.
 */
export function fetchedDatasetDir (dataDir: string, ref: Pick<DatasetRef, 'sha256'>): string {
  return join(dataDir, 'datasets', ref.sha256)
}

/**
 * The dataset directory a job on `runDir` reads: the copy of the run's dataset this node fetched from the swarm
 * when it has one, else `configured`. A dispute's tape must read what the replay it disputes read.
 */
export function datasetDirForRun (runDir: string, dataDir: string, configured?: string): string | undefined {
  let ref: DatasetRef
  try { ref = readProgram(join(runDir, 'task.json')).dataset } catch { return configured } // the job says what is wrong
  if (ref.kind !== 'idx') return configured
  const fetched = fetchedDatasetDir(dataDir, ref)
  return existsSync(fetched) ? fetched : configured
}
