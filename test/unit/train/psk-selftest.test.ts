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
      // 16 psk1 cases, then tfjs-wasm's elementwise ops: 4 binary ops on every pair of special values and 6 broadcasts, 4 unary ops (Step with 2 alphas)
      expect(n.binary).toBeTypeOf('function')
      expect(pskSelfTest(n, JS_IMPL)).toEqual({ cases: 16 + 28 + 5, mismatches: [] })
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

  it('a native elementwise op that returns the second NaN of two, or drifts in Step, is caught and named', () => {
    const n = loadNative(1)
    if ('error' in n || n.binary === undefined || n.unary === undefined) throw new Error('the addon has no elementwise kernels')
    const { binary, unary } = n
    const r = pskSelfTest({
      ...n,
      // an add compiled with its operands swapped: only NaN + NaN shows it
      binary: (a, b, out, op) => { if (op === 0 && a.length === b.length) binary(b, a, out, op); else binary(a, b, out, op) },
      unary: (x, out, op, alpha) => { unary(x, out, op, alpha); if (op === 1 && alpha !== 0) out[3] = 0.5 }
    }, JS_IMPL)
    expect(r.mismatches.some(m => /^Add \[169\] \[169\]: element \d+ /.test(m))).toBe(true)
    expect(r.mismatches.some(m => /^Step \[53\] alpha 0.25: element 3 /.test(m))).toBe(true)
    expect(r.mismatches.every(m => /^(Add \[\d+\] \[\d+\]|Step \[53\] alpha 0.25):/.test(m))).toBe(true)
  })
})
