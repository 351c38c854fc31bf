import { describe, expect, it } from 'vitest'
import '../../../node/polyfill.js'
import { initBackend, tf } from '../../../node/train/backend.js'
import { NanWatch } from '../../../node/train/nan-watch.js'

// The NaN watch skips an output whose native psk1 kernel reported it NaN-free
// (found in the kernel's own pass over it), and must still see every NaN: one a
// native kernel makes (Conv2D's Inf x 0, Add's Inf + -Inf) and one any other
// kernel makes.

describe('NaN watch on the psk1 runtime', () => {
  it('does not scan NaN-free native outputs, and sees NaNs from native and other kernels', async () => {
    const info = await initBackend('wasm', 'tfjs-wasm@4.22.0-simd+psk1')
    expect(info.kernels).toBe('native')
    const scanned: number[] = []
    const watch = new NanWatch(v => { scanned.push(v.length); return v.includes(Number.NaN) })
    try {
      const x = tf.tensor4d(Array.from({ length: 2 * 6 * 6 }, (_, i) => (i % 7) / 7), [2, 6, 6, 1])
      const w = tf.tensor4d(Array.from({ length: 9 * 8 }, (_, i) => (i % 5) / 5 - 0.4), [3, 3, 1, 8])
      const y = tf.conv2d(x, w, 1, 'valid') // [2, 4, 4, 8]: 256 elements
      const z = tf.add(y, tf.tensor1d([0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])) // native Add, a row broadcast
      expect(y.size).toBe(256)
      expect(watch.seen).toBe(false)
      expect(scanned.filter(n => n === 256)).toEqual([])

      // a NaN a native convolution makes: Inf times a zero weight
      const xi = x.bufferSync(); xi.set(Infinity, 1, 2, 2, 0)
      tf.conv2d(xi.toTensor(), tf.zerosLike(w), 1, 'valid')
      expect(watch.seen).toBe(true)

      watch.seen = false
      tf.add(tf.tensor1d([1, Infinity, 2]), tf.tensor1d([1, -Infinity, 2]))
      expect(watch.seen).toBe(true)

      // a kernel with no report is scanned as before
      watch.seen = false
      const before = scanned.length
      tf.log(tf.tensor1d([1, -1, 2]))
      expect(scanned.length).toBeGreaterThan(before)
      expect(watch.seen).toBe(true)
      z.dispose()
    } finally {
      watch.dispose()
    }
  })
})
