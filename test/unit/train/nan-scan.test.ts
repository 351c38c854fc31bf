import { describe, expect, it } from 'vitest'
import { nativeNaNScan } from '../../../node/train/psk-native.js'

// The NaN watch's native scan must say exactly what `includes(NaN)` says: any
// NaN bit pattern (quiet, signalling, negative, any payload) anywhere, and no
// other value (±Inf, ±0, subnormals, the largest finite).

const bits = (u: number[]): Float32Array => new Float32Array(Uint32Array.from(u).buffer)
const NANS = [0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fffffff, 0xffffffff, 0x7fc00abc]
const NOT_NAN = [0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x3f800000]

describe('native NaN scan', () => {
  const scan = nativeNaNScan()

  it('is built (npm ci builds the addon; without it the watch falls back to includes)', () => {
    expect(scan).toBeTypeOf('function')
  })

  it('finds every NaN pattern at every position of arrays around the block size, and nothing else', () => {
    for (const n of [0, 1, 7, 1023, 1024, 1025, 4099]) {
      const clean = bits(Array.from({ length: n }, (_, i) => NOT_NAN[i % NOT_NAN.length]))
      expect(scan!(clean), `clean length ${n}`).toBe(false)
      for (const pos of new Set([0, Math.floor(n / 2), n - 1, 1023, 1024].filter(p => p >= 0 && p < n))) {
        for (const nan of NANS) {
          const v = clean.slice()
          new Uint32Array(v.buffer)[pos] = nan
          expect(scan!(v), `0x${nan.toString(16)} at ${pos} of ${n}`).toBe(v.includes(Number.NaN))
          expect(scan!(v)).toBe(true)
        }
      }
    }
  })

  it('reads a view into a larger buffer (the wasm heap) without looking past its end', () => {
    const heap = new Float32Array(64)
    heap[40] = Number.NaN
    expect(scan!(new Float32Array(heap.buffer, 4 * 8, 32))).toBe(false)
    expect(scan!(new Float32Array(heap.buffer, 4 * 8, 33))).toBe(true)
  })
})
