// Reed–Solomon coding parameters of a checkpoint (docs/shards.md, "Erasure-coded
// checkpoints"). Everything here is a pure function of the checkpoint's byte
// length, so the solver, every verifier and the chain derive the same layout
// from the one number the solver commits (dataBytes).
//
// GF(2^8) Reed–Solomon allows at most 256 chunks. Rate 1/2 (as many parity
// chunks as data chunks): any k of the n = 2k chunks rebuild the checkpoint,
// so a solver must withhold more than half of them to make it unrecoverable,
// and CHUNK_SAMPLES uniform samples then miss every withheld chunk with
// probability below 2^-48.

/** Largest number of data chunks (n = 2k ≤ 256, the GF(2^8) limit). */
export const MAX_DATA_SHARDS = 128
/** Chunks are about this size for small checkpoints (fewer, larger chunks only once k reaches MAX_DATA_SHARDS). */
export const TARGET_CHUNK_BYTES = 8 * 1024
/** A chunk is one shard block at most (protocols/shards MAX_BLOCK_BYTES). */
export const MAX_CHUNK_BYTES = 1024 * 1024
/** Largest checkpoint that can be coded: 128 MiB. */
export const MAX_CODED_BYTES = MAX_DATA_SHARDS * MAX_CHUNK_BYTES
/**
 * Chunks the chain samples per request (distinct): a solver missing a fraction
 * w of the chunks answers with probability ≤ (1 − w)^48; at w = 10% that is
 * 0.64% (0.33% exactly, sampling 48 of 256 without replacement).
 */
export const CHUNK_SAMPLES = 48

export interface CodingParams {
  /** bytes of the checkpoint (state.bin) */
  dataBytes: number
  /** data chunks k: the first k chunks are the checkpoint, zero-padded */
  dataShards: number
  /** parity chunks m = k */
  parityShards: number
  /** n = k + m */
  total: number
  /** every chunk has this many bytes */
  chunkBytes: number
}

export function codingParams (dataBytes: number): CodingParams {
  if (!Number.isSafeInteger(dataBytes) || dataBytes < 1 || dataBytes > MAX_CODED_BYTES) throw new RangeError(`a coded checkpoint has 1 to ${MAX_CODED_BYTES} bytes, not ${dataBytes}`)
  const k = Math.min(MAX_DATA_SHARDS, Math.ceil(dataBytes / TARGET_CHUNK_BYTES))
  return { dataBytes, dataShards: k, parityShards: k, total: 2 * k, chunkBytes: Math.ceil(dataBytes / k) }
}

/** Chunks sampled per request for a checkpoint of n chunks (all of them when n is small). */
export function samplesFor (total: number): number {
  return Math.min(CHUNK_SAMPLES, total)
}

/** Checkpoint steps of a run: 0, every, 2·every, … and the last step (node/train/run.ts). */
export function checkpointSteps (stepCount: number, every: number): number[] {
  if (!Number.isInteger(stepCount) || stepCount < 1 || !Number.isInteger(every) || every < 1) throw new RangeError('checkpoint steps need stepCount ≥ 1 and every ≥ 1')
  const out: number[] = []
  for (let s = 0; s <= stepCount; s += every) out.push(s)
  if (stepCount % every !== 0) out.push(stepCount)
  return out
}

/** Index of `step` among the run's checkpoints and their count, or null if it is not a checkpoint step. */
export function checkpointPosition (step: number, stepCount: number, every: number): { index: number, count: number } | null {
  if (!Number.isInteger(stepCount) || stepCount < 1 || !Number.isInteger(every) || every < 1) return null
  const regular = Math.floor(stepCount / every) + 1
  const count = regular + (stepCount % every === 0 ? 0 : 1)
  if (!Number.isInteger(step) || step < 0 || step > stepCount) return null
  if (step % every === 0) return { index: step / every, count }
  if (step === stepCount) return { index: regular, count }
  return null
}

/**
 * Probability that s distinct uniform samples of n chunks all miss the
 * `withheld` ones (hypergeometric): C(n − w, s) / C(n, s).
 */
export function missProbability (total: number, withheld: number, samples: number): number {
  if (withheld <= 0) return 1
  if (samples > total - withheld) return 0
  let p = 1
  for (let i = 0; i < samples; i++) p *= (total - withheld - i) / (total - i)
  return p
}

/** The same for independent samples (with replacement): (1 − w)^s, an upper bound of the above. */
export function missProbabilityIndependent (fraction: number, samples: number): number {
  return Math.pow(1 - fraction, samples)
}
