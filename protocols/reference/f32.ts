import type { TypedValues } from '../commit/tensor.js'

// float32 arithmetic on bit patterns (uint32), as the pinned runtime computes
// it on x86-64 (V8's SSE/AVX code for wasm f32 and f32x4 ops). JS numbers
// cannot carry a NaN's sign or payload reliably (engines may canonicalise, and
// reading a signalling NaN out of a Float32Array quietens it), so every
// reference value is defined by its bits:
//   - an op with a NaN operand returns the first NaN operand, quietened
//     (quiet bit 0x00400000 set, sign and payload kept);
//   - an invalid op on non-NaN operands (0*inf, inf-inf, 0/0, sqrt(-x))
//     returns the x86 default NaN 0xffc00000 (negative);
//   - everything else is the IEEE round-to-nearest result (fround of the
//     double result is exact for + - * / sqrt).

export const DEFAULT_NAN = 0xffc00000
export const QUIET_BIT = 0x00400000

const f = new Float32Array(1)
const u = new Uint32Array(f.buffer)

export function isNaNBits (x: number): boolean { return (x & 0x7fffffff) >>> 0 > 0x7f800000 }
export function quiet (x: number): number { return (x | QUIET_BIT) >>> 0 }

/** Bits of a non-NaN float32 value (a NaN argument gives DEFAULT_NAN: never carry NaN in a number). */
export function bitsOf (v: number): number {
  if (Number.isNaN(v)) return DEFAULT_NAN
  f[0] = v
  return u[0]
}

/** The value of non-NaN bits (NaN bits give a NaN with unspecified bits). */
export function valueOf (x: number): number { u[0] = x; return f[0] }

/** The uint32 view of a float32 operand (bits, not values). */
export function bitsView (v: TypedValues): Uint32Array {
  if (!(v instanceof Float32Array)) throw new TypeError('float32 operand expected')
  return new Uint32Array(v.buffer, v.byteOffset, v.length)
}

type Op = (a: number, b: number) => number
function binary (op: Op): (a: number, b: number) => number {
  return (a, b) => {
    if (isNaNBits(a)) return quiet(a)
    if (isNaNBits(b)) return quiet(b)
    return bitsOf(Math.fround(op(valueOf(a), valueOf(b))))
  }
}

export const add = binary((a, b) => a + b)
export const sub = binary((a, b) => a - b)
export const mul = binary((a, b) => a * b)
export const div = binary((a, b) => a / b)

export function sqrt (a: number): number {
  if (isNaNBits(a)) return quiet(a)
  return bitsOf(Math.fround(Math.sqrt(valueOf(a))))
}

/** a < b as float32 (false when either is NaN). */
export function lt (a: number, b: number): boolean {
  return !isNaNBits(a) && !isNaNBits(b) && valueOf(a) < valueOf(b)
}

/** C++ std::max(a, b) = (a < b) ? b : a (also wasm f32x4.pmax), bits kept (no quietening): NaN a stays, NaN b loses. */
export function stdMax (a: number, b: number): number { return lt(a, b) ? b : a }
/** C++ std::min(a, b) = (b < a) ? b : a (also wasm f32x4.pmin). */
export function stdMin (a: number, b: number): number { return lt(b, a) ? b : a }

/** Integer max with 0 on the bits (wasm i32x4.max_s): negative-signed patterns, -0 and -NaN included, give +0. */
export function reluBits (a: number): number { return (a | 0) > 0 ? a >>> 0 : 0 }
