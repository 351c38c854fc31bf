// Seeded pseudo-random numbers every peer (and the chain) can recompute.
// All arithmetic is on uint32 via Math.imul and >>> so the results are exact in
// any JS engine. Seeding: splitmix32; stream: xoshiro128**.

const GOLDEN = 0x9e3779b9

/** splitmix32 finaliser: a bijective mix of one uint32. */
export function mix32 (x: number): number {
  let z = x >>> 0
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}

/** Derives an independent uint32 seed from a seed and a path of uint32 labels. */
export function deriveSeed (seed: number, ...labels: number[]): number {
  let s = mix32((seed >>> 0) + GOLDEN)
  for (const l of labels) s = mix32((s + GOLDEN + mix32(l >>> 0)) >>> 0)
  return s
}

export function assertSeed (seed: unknown, what = 'seed'): asserts seed is number {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`${what} must be an integer in [0, 2^32-1], got ${String(seed)}`)
  }
}

/** xoshiro128** seeded by four splitmix32 outputs of `seed`. */
export class Rng {
  private s0: number
  private s1: number
  private s2: number
  private s3: number

  constructor (seed: number) {
    let st = seed >>> 0
    const next = (): number => { st = (st + GOLDEN) >>> 0; return mix32(st) }
    this.s0 = next(); this.s1 = next(); this.s2 = next(); this.s3 = next()
    // xoshiro must not start from the all-zero state
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1
  }

  /** Next uint32. */
  nextU32 (): number {
    const r = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0
    const t = (this.s1 << 9) >>> 0
    this.s2 = (this.s2 ^ this.s0) >>> 0
    this.s3 = (this.s3 ^ this.s1) >>> 0
    this.s1 = (this.s1 ^ this.s2) >>> 0
    this.s0 = (this.s0 ^ this.s3) >>> 0
    this.s2 = (this.s2 ^ t) >>> 0
    this.s3 = rotl(this.s3, 11)
    return r
  }

  /** Uniform integer in [0, n) by rejection (no modulo bias); n in [1, 2^32]. */
  below (n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 0x100000000) throw new RangeError(`below(${n})`)
    const limit = Math.floor(0x100000000 / n) * n
    for (;;) {
      const x = this.nextU32()
      if (x < limit) return x % n
    }
  }
}

function rotl (x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
