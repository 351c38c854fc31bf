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
      // 31 psk1 cases (5 matmuls, 6 geometries x 3 convolution kernels, 4 pools twice; one of each kind on NaN-free
      // inputs), then tfjs-wasm's elementwise ops: 4 binary ops on every pair of special values, 6 broadcasts and a
      // NaN-free one, 4 unary ops (Step with 2 alphas) on two inputs
      expect(n.binary).toBeTypeOf('function')
      expect(pskSelfTest(n, JS_IMPL)).toEqual({ cases: 31 + 32 + 10, mismatches: [] })
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
    expect(r.mismatches).toHaveLength(6)
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
    expect(r.mismatches.every(m => /^(Add \[\d+\] \[\d+\]|Step \[(53|40)\] alpha 0.25):/.test(m))).toBe(true)
  })

  it('a kernel that reports its output NaN-free when it holds a NaN (or the reverse) is caught', () => {
    // the NaN watch skips an output its native kernel reported NaN-free: a lying report would hide the run's first NaN
    const n = loadNative(1)
    if ('error' in n || n.binary === undefined) throw new Error('the addon has no elementwise kernels')
    const { binary } = n
    const r = pskSelfTest({
      ...n,
      conv2d: (x, w, out, g) => { n.conv2d(x, w, out, g); return false },
      binary: (a, b, out, op) => { const got = binary(a, b, out, op); return op === 2 ? !(got as boolean) : got }
    }, JS_IMPL)
    // the convolutions on special values hold NaNs; the NaN-free one is reported truly by accident of the lie
    expect(r.mismatches.filter(m => /^Conv2D \d.*: reported no NaN in an output that holds one$/.test(m))).toHaveLength(5)
    expect(r.mismatches.filter(m => /^Multiply \[\d+\] \[\d+\]: reported (a NaN|no NaN) in an output that holds (none|one)$/.test(m))).toHaveLength(8)
    expect(r.mismatches).toHaveLength(13)
  })

  it('the native kernels report the NaN-free case as such (the report is made, not left undefined)', () => {
    const n = loadNative(1)
    if ('error' in n || n.binary === undefined || n.unary === undefined) throw new Error('the addon has no elementwise kernels')
    const g = { B: 1, H: 5, W: 5, CI: 2, kh: 3, kw: 3, CO: 8, OH: 3, OW: 3, sh: 1, sw: 1, padTop: 0, padLeft: 0 }
    const x = new Float32Array(50).fill(0.5); const w = new Float32Array(144).fill(0.25); const out = new Float32Array(72)
    expect(n.conv2d(x, w, out, g)).toBe(false)
    x[7] = Infinity; w.fill(0)
    expect(n.conv2d(x, w, out, g)).toBe(true)
    expect(n.binary(Float32Array.of(1, Infinity), Float32Array.of(2, -Infinity), new Float32Array(2), 0)).toBe(true)
    expect(n.binary(Float32Array.of(1, 2), Float32Array.of(2, 3), new Float32Array(2), 0)).toBe(false)
    // Relu and Step keep NaNs and are never scanned: no report
    expect(n.unary(Float32Array.of(1, -1), new Float32Array(2), 0, 0)).toBeUndefined()
  })
})
