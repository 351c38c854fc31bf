import { Rng, deriveSeed } from './prng.js'

// Data order: each epoch is a Fisher-Yates permutation of the training rows,
// drawn from a stream derived from (program seed, ORDER_DOMAIN, epoch). Step s
// (0-based) uses rows perm_e[p*b .. p*b+b) with e = floor(s / stepsPerEpoch),
// p = s mod stepsPerEpoch; the tail of an epoch that does not fill a batch is
// dropped. So anyone can recompute which rows formed the batch of any step.

export const ORDER_DOMAIN = 0x6f726472 // 'ordr'
export const INIT_DOMAIN = 0x696e6974 // 'init'

export function epochPermutation (seed: number, epoch: number, n: number): Uint32Array {
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new RangeError(`dataset size ${n} out of range`)
  if (!Number.isInteger(epoch) || epoch < 0 || epoch > 0xffffffff) throw new RangeError(`epoch ${epoch} out of range`)
  const rng = new Rng(deriveSeed(seed, ORDER_DOMAIN, epoch))
  const perm = new Uint32Array(n)
  for (let i = 0; i < n; i++) perm[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1)
    const t = perm[i]; perm[i] = perm[j]; perm[j] = t
  }
  return perm
}

export function stepsPerEpoch (n: number, batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batch size ${batchSize} must be a positive integer`)
  const s = Math.floor(n / batchSize)
  if (s < 1) throw new RangeError(`batch size ${batchSize} is larger than the dataset (${n} rows)`)
  return s
}

/** Dataset rows of the batch of 0-based step `step`. */
export function batchIndices (seed: number, n: number, batchSize: number, step: number): Uint32Array {
  if (!Number.isInteger(step) || step < 0) throw new RangeError(`step ${step} must be a non-negative integer`)
  const spe = stepsPerEpoch(n, batchSize)
  const epoch = Math.floor(step / spe)
  const p = step % spe
  return epochPermutation(seed, epoch, n).slice(p * batchSize, (p + 1) * batchSize)
}

/**
 * Caches one epoch's permutation so a training loop does not redo O(n) work
 * every step; results are identical to batchIndices.
 */
export class DataOrder {
  private epoch = -1
  private perm: Uint32Array = new Uint32Array(0)
  readonly stepsPerEpoch: number

  constructor (readonly seed: number, readonly n: number, readonly batchSize: number) {
    this.stepsPerEpoch = stepsPerEpoch(n, batchSize)
  }

  batch (step: number): Uint32Array {
    const e = Math.floor(step / this.stepsPerEpoch)
    if (e !== this.epoch) { this.perm = epochPermutation(this.seed, e, this.n); this.epoch = e }
    const p = step % this.stepsPerEpoch
    return this.perm.subarray(p * this.batchSize, (p + 1) * this.batchSize)
  }
}
