import { describe, expect, it } from 'vitest'
import { JS_IMPL, loadNative } from '../../../node/train/psk-native.js'
import { pskSelfTest, type KernelSet } from '../../../node/train/psk-selftest.js'

// The self-test a training process runs before it trusts the native kernels:
// it passes on the built addon and names the case where one output bit drifts.

describe('psk1 kernel self-test', () => {
  it('the built addon passes on 1 and 2 threads', () => {
    for (const t of [1, 2]) {
      const n = loadNative(t)
      if ('error' in n) throw new Error(n.error)
      expect(pskSelfTest(n, JS_IMPL)).toEqual({ cases: 16, mismatches: [] })
    }
  })

  it('one flipped bit in one kernel\'s output is caught and named', () => {
    const drifting: KernelSet = {
      ...JS_IMPL,
      conv2dBackpropFilter: (x, dy, dw, g) => {
        JS_IMPL.conv2dBackpropFilter(x, dy, dw, g)
        new Uint32Array(dw.buffer, dw.byteOffset, dw.length)[5] ^= 1
      }
    }
    const r = pskSelfTest(drifting, JS_IMPL)
    expect(r.mismatches).toHaveLength(3)
    for (const m of r.mismatches) expect(m).toMatch(/^Conv2DBackpropFilter .*: element 5 /)
  })
})
