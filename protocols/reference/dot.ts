import { add, isNaNBits, mul, quiet } from './f32.js'
import { ReferenceError } from './types.js'

// For accumulating loops whose operand order is not fixed: in tfjs's own C++
// loops (blocked MatMul, Conv2DBackpropInput) which operand of an f32 add
// comes first changes when V8 tiers the function up from Liftoff to TurboFan
// (measured), so the runtime itself has no fixed answer when BOTH operands are
// NaN with different bits: then the element has no reference value (refused,
// never guessed). Otherwise the result is the same either way, so these
// helpers are exact. (The XNNPACK kernels' orders are fixed: xnn-order.ts.)

/** Two different NaNs met: the element is a NaN whose bits the reference cannot tell. */
export class AmbiguousNaN extends ReferenceError {}

function meet (a: number, b: number, what: string): void {
  if (isNaNBits(a) && isNaNBits(b) && quiet(a) !== quiet(b)) {
    throw new AmbiguousNaN(`${what}: two different NaNs (0x${quiet(a).toString(16)}, 0x${quiet(b).toString(16)}) meet in one operation; which one the runtime keeps changes with V8's tier-up, so this element has no reference`)
  }
}

export function addC (a: number, b: number, what: string): number { meet(a, b, what); return add(a, b) }
export function mulC (a: number, b: number, what: string): number { meet(a, b, what); return mul(a, b) }
