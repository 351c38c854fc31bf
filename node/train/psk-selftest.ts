import type { ConvGeom, MatMulDims } from '../../protocols/reference/psk-kernels.js'
import { convPads } from '../../protocols/reference/index.js'
import { BINARY_BITS, UNARY_BITS } from '../../protocols/reference/elementwise.js'
import type { NaNReport } from './nan-report.js'
import { ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, type BinaryFn, type UnaryFn } from './psk-elementwise.js'

// A peer's native psk1 kernels must give the reference's bits on *this* machine:
// the addon picks an AVX-512, AVX2 or SSE version of each kernel when it loads, a
// compiler may contract a multiply-add, and an honest solver whose kernels drift
// by one bit loses every dispute. So before a process trains or replays with the
// addon, it runs every kernel on a fixed set of small cases (odd sizes, the
// vector widths' remainders, strides, padding, special values, 1 and 2 threads)
// against the JavaScript kernels, which compute the element references' bits.
// Any difference and the process uses the JavaScript kernels instead, and says so.
// A kernel that reports whether its output holds a NaN (nan-report.ts: the NaN
// watch then skips that output) must report it truly, on special values and on
// NaN-free inputs.

/** ±0, subnormals, min normal, ±1, max, ±Inf, NaNs with sign and payload, as bits */
const SPECIALS = [
  0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff800000, 0x7f800000, 0x7fc01234, 0xffc00001, 0x7f800001
]

class Cases {
  private s = 0x5eed1234
  private rand (): number { this.s = (Math.imul(this.s, 1664525) + 1013904223) >>> 0; return this.s / 2 ** 32 }
  /** `n` values in ±1 with one in 16 a special value (none when `finite`), deterministic */
  values (n: number, finite = false): Float32Array {
    const v = new Float32Array(n); const u = new Uint32Array(v.buffer)
    for (let i = 0; i < n; i++) {
      if (!finite && this.rand() < 1 / 16) u[i] = SPECIALS[Math.floor(this.rand() * SPECIALS.length)]
      else v[i] = (this.rand() - 0.5) * 2
    }
    return v
  }
}

function conv (B: number, H: number, W: number, CI: number, k: number, CO: number, s: number, same: boolean): ConvGeom {
  const p = convPads(H, W, k, k, [s, s], same ? 'same' : 'valid')
  return { B, H, W, CI, kh: k, kw: k, CO, OH: p.outH, OW: p.outW, sh: s, sw: s, padTop: p.padTop, padLeft: p.padLeft }
}

const MATMULS: MatMulDims[] = [
  { batch: 1, aBatch: 1, bBatch: 1, M: 7, N: 37, K: 29, ta: false, tb: false, relu: false },
  { batch: 1, aBatch: 1, bBatch: 1, M: 13, N: 16, K: 64, ta: true, tb: false, relu: true },
  { batch: 1, aBatch: 1, bBatch: 1, M: 6, N: 33, K: 17, ta: false, tb: true, relu: false },
  { batch: 3, aBatch: 3, bBatch: 1, M: 5, N: 24, K: 9, ta: true, tb: true, relu: false }
]
// the last two: one input channel into 8 (a grey image's first layer: 16 pixels a block, then the rest), with and without padding
const CONVS: ConvGeom[] = [
  conv(2, 9, 30, 3, 3, 17, 1, true), conv(1, 11, 11, 16, 5, 24, 2, false), conv(2, 8, 8, 27, 3, 40, 1, true),
  conv(2, 5, 37, 1, 3, 8, 1, true), conv(1, 6, 36, 1, 3, 8, 1, false)
]
// the last: windows that tile the image apart, whole vectors of channels (a CNN's pool, written without a second pass)
const POOLS: ConvGeom[] = [
  conv(2, 8, 8, 12, 2, 12, 2, false), conv(1, 9, 9, 17, 3, 17, 2, true), conv(1, 7, 7, 8, 3, 8, 1, false), conv(2, 6, 7, 16, 2, 16, 2, false)
]

/** [n, b.length]: the same shape, a scalar, rows of 8, 16, 3 and 100 (vector remainders, the repeated short row, tails) */
const BINARIES: Array<[number, number]> = [[37, 37], [37, 1], [1000, 8], [96, 16], [75, 3], [300, 100]]

const bits = (v: Float32Array): Uint32Array => new Uint32Array(v.buffer, v.byteOffset, v.length)
const size = (...d: number[]): number => d.reduce((a, b) => a * b, 1)

/** The kernels a self-test compares (psk-native.ts's PskImpl has them). */
export interface KernelSet {
  matmul: (a: Float32Array, b: Float32Array, out: Float32Array, d: MatMulDims, bias?: Float32Array) => NaNReport
  conv2d: (x: Float32Array, w: Float32Array, out: Float32Array, g: ConvGeom) => NaNReport
  conv2dBackpropInput: (dy: Float32Array, w: Float32Array, dx: Float32Array, g: ConvGeom) => NaNReport
  conv2dBackpropFilter: (x: Float32Array, dy: Float32Array, dw: Float32Array, g: ConvGeom) => NaNReport
  maxPoolGrad: (dy: Float32Array, x: Float32Array, dx: Float32Array, g: ConvGeom) => NaNReport
}

const holdsNaN = (v: Float32Array): boolean => v.includes(Number.NaN)
/** a kernel's report (when it makes one) against its output */
function wrongReport (report: NaNReport, out: Float32Array): string | undefined {
  if (typeof report !== 'boolean' || report === holdsNaN(out)) return undefined
  return `reported ${report ? 'a NaN' : 'no NaN'} in an output that holds ${report ? 'none' : 'one'}`
}

/**
 * Runs `impl` and `reference` (the JavaScript kernels) on every case; the names of the cases whose bits differ. The
 * native elementwise kernels (tfjs-wasm's bits, not psk1's), when `impl` has them, against the element references'
 * bit functions.
 */
export function pskSelfTest (impl: KernelSet & { binary?: BinaryFn, unary?: UnaryFn }, reference: KernelSet): { cases: number, mismatches: string[] } {
  const c = new Cases()
  const mismatches: string[] = []
  let cases = 0
  const compare = (what: string, out: number, run: (k: KernelSet, o: Float32Array) => NaNReport): void => {
    cases++
    const a = new Float32Array(out); const b = new Float32Array(out)
    const report = run(impl, a)
    run(reference, b)
    const ua = bits(a); const ub = bits(b)
    const i = ua.findIndex((u, j) => u !== ub[j])
    if (i >= 0) mismatches.push(`${what}: element ${i} 0x${ua[i].toString(16)} != 0x${ub[i].toString(16)}`)
    const wrong = wrongReport(report, a)
    if (wrong !== undefined) mismatches.push(`${what}: ${wrong}`)
  }
  // each kernel on special values, then (a case of each kind once more) on NaN-free inputs, which must be reported so
  for (const [d, finite] of [...MATMULS.map(m => [m, false] as const), [MATMULS[1], true] as const]) {
    const a = c.values(d.aBatch * d.M * d.K, finite); const w = c.values(d.bBatch * d.K * d.N, finite); const bias = c.values(d.N, finite)
    compare(`MatMul ${JSON.stringify(d)}${finite ? ' finite' : ''}`, d.batch * d.M * d.N, (k, o) => k.matmul(a, w, o, d, bias))
  }
  for (const [g, finite] of [...CONVS.map(m => [m, false] as const), [CONVS[1], true] as const]) {
    const x = c.values(size(g.B, g.H, g.W, g.CI), finite); const w = c.values(size(g.kh, g.kw, g.CI, g.CO), finite)
    const dy = c.values(size(g.B, g.OH, g.OW, g.CO), finite)
    const what = `${g.B}x${g.H}x${g.W}x${g.CI} k${g.kh} s${g.sh} -> ${g.CO}${finite ? ' finite' : ''}`
    compare(`Conv2D ${what}`, size(g.B, g.OH, g.OW, g.CO), (k, o) => k.conv2d(x, w, o, g))
    compare(`Conv2DBackpropInput ${what}`, size(g.B, g.H, g.W, g.CI), (k, o) => k.conv2dBackpropInput(dy, w, o, g))
    compare(`Conv2DBackpropFilter ${what}`, size(g.kh, g.kw, g.CI, g.CO), (k, o) => k.conv2dBackpropFilter(x, dy, o, g))
  }
  for (const g of POOLS) {
    const x = c.values(size(g.B, g.H, g.W, g.CI)); const dy = c.values(size(g.B, g.OH, g.OW, g.CO))
    compare(`MaxPoolGrad ${g.B}x${g.H}x${g.W}x${g.CI} k${g.kh} s${g.sh}`, x.length, (k, o) => k.maxPoolGrad(dy, x, o, g))
    const xf = c.values(x.length, true); const dyf = c.values(dy.length, true)
    compare(`MaxPoolGrad ${g.B}x${g.H}x${g.W}x${g.CI} k${g.kh} s${g.sh} finite`, x.length, (k, o) => k.maxPoolGrad(dyf, xf, o, g))
  }
  const elementwise = (what: string, got: Float32Array, want: (i: number) => number, report?: NaNReport): void => {
    cases++
    const u = bits(got)
    const i = u.findIndex((v, j) => v !== want(j))
    if (i >= 0) mismatches.push(`${what}: element ${i} 0x${u[i].toString(16)} != 0x${want(i).toString(16)}`)
    const wrong = wrongReport(report, got)
    if (wrong !== undefined) mismatches.push(`${what}: ${wrong}`)
  }
  if (impl.binary !== undefined) {
    // every special value against every other (NaN op NaN shows which operand a kernel returns), then random cases
    const crossed = (f: (i: number) => number): Float32Array => new Float32Array(Uint32Array.from({ length: SPECIALS.length ** 2 }, (_, i) => f(i)).buffer)
    const pairs: Array<[Float32Array, Float32Array]> = [
      [crossed(i => SPECIALS[i % SPECIALS.length]), crossed(i => SPECIALS[Math.floor(i / SPECIALS.length)])],
      ...BINARIES.map(([n, bn]): [Float32Array, Float32Array] => [c.values(n), c.values(bn)]),
      [c.values(1000, true), c.values(8, true)]
    ]
    for (const [a, b] of pairs) {
      const n = a.length; const bn = b.length; const ua = bits(a); const ub = bits(b)
      ELEMENTWISE_BINARY.forEach((name, op) => {
        const out = new Float32Array(n)
        const report = impl.binary?.(a, b, out, op)
        elementwise(`${name} [${n}] [${bn}]`, out, i => BINARY_BITS[name](ua[i], ub[i % bn]), report)
      })
    }
  }
  if (impl.unary !== undefined) {
    for (const x of [c.values(53), c.values(40, true)]) {
      const ux = bits(x)
      ELEMENTWISE_UNARY.forEach((name, op) => {
        for (const alpha of name === 'Step' ? [0, 0.25] : [0]) {
          const out = new Float32Array(x.length)
          const report = impl.unary?.(x, out, op, alpha)
          elementwise(`${name} [${x.length}]${name === 'Step' ? ` alpha ${alpha}` : ''}`, out, i => UNARY_BITS[name](ux[i], { alpha }), report)
        }
      })
    }
  }
  return { cases, mismatches }
}
