// Single-precision expf and logf exactly as computed by the pinned runtime
// (tfjs-wasm 4.22.0 SIMD links musl's libm: the ARM optimized-routines
// algorithms, evaluated in double, no FMA). Table constants: exp2f's table is
// tab[i] = bits(2^(i/32)) - (i << 47) (recomputed exactly and checked against
// the .wasm data segment); logf's {invc, logc} table, ln2 and polynomials are
// copied bit for bit from the pinned .wasm's data segment. The unit tests
// compare every value with the backend.

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
const f64 = new Float64Array(1)
const u64 = new BigUint64Array(f64.buffer)
const MASK64 = (1n << 64n) - 1n

function asuint (x: number): number { f32[0] = x; return u32[0] }
function asfloat (u: number): number { u32[0] = u >>> 0; return f32[0] }
function asuint64 (x: number): bigint { f64[0] = x; return u64[0] }
function asdouble (u: bigint): number { u64[0] = u & MASK64; return f64[0] }
function d (hex: string): number { return asdouble(BigInt(hex)) }

// ---- expf -------------------------------------------------------------
const EXP_N = 32
const EXP_TAB: bigint[] = (() => {
  // tab[i] = round-to-nearest double bits of 2^(i/32), minus (i << 47)
  const out: bigint[] = []
  for (let i = 0; i < EXP_N; i++) {
    const target = 1n << BigInt(52 * 32 + i)
    let lo = 1n << 52n; let hi = 1n << 53n
    while (hi - lo > 1n) { const m = (lo + hi) >> 1n; if (m ** 32n <= target) lo = m; else hi = m }
    const mant = (2n * lo + 1n) ** 32n <= (target << 32n) ? lo + 1n : lo
    out.push(((1023n << 52n) | (mant - (1n << 52n))) - (BigInt(i) << 47n))
  }
  return out
})()
const INVLN2N = d('0x3ff71547652b82fe') * EXP_N
const SHIFT = 1.5 * 2 ** 52 // 0x1.8p52
const C0 = d('0x3ebc6af84b912394')
const C1 = d('0x3f2ebfce50fac4f3')
const C2 = d('0x3f962e42ff0c52d6')
const TOP12_88 = asuint(88) >>> 20
const TOP12_INF = asuint(Infinity) >>> 20
const EXP_OFLOW = Math.fround(0x162e42e / 2 ** 24 * 64) // 0x1.62e42ep6f
const EXP_UFLOW = -Math.fround(0x19fe368 / 2 ** 24 * 64) // -0x1.9fe368p6f

export function expf (xIn: number): number {
  const x = Math.fround(xIn)
  const abstop = (asuint(x) >>> 20) & 0x7ff
  if (abstop >= TOP12_88) {
    if (x === -Infinity) return 0
    if (abstop >= TOP12_INF) return Math.fround(x + x)
    if (x > EXP_OFLOW) return Infinity
    if (x < EXP_UFLOW) return 0
  }
  const z = INVLN2N * x
  let kd = z + SHIFT
  const ki = asuint64(kd)
  kd -= SHIFT
  const r = z - kd
  const t = (EXP_TAB[Number(ki % BigInt(EXP_N))] + (ki << 47n)) & MASK64
  const s = asdouble(t)
  const zz = C0 * r + C1
  const r2 = r * r
  let y = C2 * r + 1
  y = zz * r2 + y
  y = y * s
  return Math.fround(y)
}

// ---- logf -------------------------------------------------------------
const LOG_TAB = [
  '0x3ff661ec79f8f3be', '0xbfd57bf7808caade', '0x3ff571ed4aaf883d', '0xbfd2bef0a7c06ddb',
  '0x3ff49539f0f010b0', '0xbfd01eae7f513a67', '0x3ff3c995b0b80385', '0xbfcb31d8a68224e9',
  '0x3ff30d190c8864a5', '0xbfc6574f0ac07758', '0x3ff25e227b0b8ea0', '0xbfc1aa2bc79c8100',
  '0x3ff1bb4a4a1a343f', '0xbfba4e76ce8c0e5e', '0x3ff12358f08ae5ba', '0xbfb1973c5a611ccc',
  '0x3ff0953f419900a7', '0xbfa252f438e10c1e', '0x3ff0000000000000', '0x0000000000000000',
  '0x3fee608cfd9a47ac', '0x3faaa5aa5df25984', '0x3feca4b31f026aa0', '0x3fbc5e53aa362eb4',
  '0x3feb2036576afce6', '0x3fc526e57720db08', '0x3fe9c2d163a1aa2d', '0x3fcbc2860d224770',
  '0x3fe886e6037841ed', '0x3fd1058bc8a07ee1', '0x3fe767dcf5534862', '0x3fd4043057b6ee09'
].map(d)
const LN2 = d('0x3fe62e42fefa39ef')
const A0 = d('0xbfd00ea348b88334')
const A1 = d('0x3fd5575b0be00b6a')
const A2 = d('0xbfdffffef20a4123')
const LOG_OFF = 0x3f330000

export function logf (xIn: number): number {
  const x = Math.fround(xIn)
  let ix = asuint(x)
  if (ix === 0x3f800000) return 0
  if (((ix - 0x00800000) >>> 0) >= 0x7f800000 - 0x00800000) {
    if (((ix << 1) >>> 0) === 0) return -Infinity
    if (ix === 0x7f800000) return x
    if ((ix & 0x80000000) !== 0 || ((ix << 1) >>> 0) >= 0xff000000) return NaN
    // subnormal: normalise
    ix = asuint(Math.fround(x * 2 ** 23))
    ix = (ix - (23 << 23)) >>> 0
  }
  const tmp = (ix - LOG_OFF) >>> 0
  const i = (tmp >>> 19) % 16
  const k = (tmp | 0) >> 23
  const iz = (ix - ((tmp & 0xff800000) >>> 0)) >>> 0
  const invc = LOG_TAB[2 * i]
  const logc = LOG_TAB[2 * i + 1]
  const z = asfloat(iz)
  const r = z * invc - 1
  const y0 = logc + k * LN2
  const r2 = r * r
  let y = A1 * r + A2
  y = A0 * r2 + y
  y = y * r2 + (y0 + r)
  return Math.fround(y)
}
