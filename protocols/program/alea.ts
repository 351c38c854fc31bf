// Johannes Baagøe's Alea generator exactly as seedrandom 3.0.5 implements it
// (lib/alea.js, the generator tfjs-core's UniformRandom draws from).
// Copyright (C) 2010 Johannes Baagøe, MIT license; ported line for line so
// every double it returns has the same bits as tfjs's. All arithmetic is on
// doubles and uint32 coercions that IEEE 754 fixes exactly.

function mash (): (data: string) => number {
  let n = 0xefc8249d
  return (data: string): number => {
    for (let i = 0; i < data.length; i++) {
      n += data.charCodeAt(i)
      let h = 0.02519603282416938 * n
      n = h >>> 0
      h -= n
      h *= n
      n = h >>> 0
      h -= n
      n += h * 0x100000000 // 2^32
    }
    return (n >>> 0) * 2.3283064365386963e-10 // 2^-32
  }
}

/** seedrandom's `alea(seed)`: a function returning doubles in [0, 1). */
export function alea (seed: string): () => number {
  const m = mash()
  let c = 1
  let s0 = m(' ')
  let s1 = m(' ')
  let s2 = m(' ')
  s0 -= m(seed)
  if (s0 < 0) s0 += 1
  s1 -= m(seed)
  if (s1 < 0) s1 += 1
  s2 -= m(seed)
  if (s2 < 0) s2 += 1
  return (): number => {
    const t = 2091639 * s0 + c * 2.3283064365386963e-10 // 2^-32
    s0 = s1
    s1 = s2
    c = t | 0
    s2 = t - c
    return s2
  }
}
