import type { TaskProgram } from './program.js'
import { WASM_RUNTIME } from './runtime.js'
import type { LayerJson, TopologyInfo } from './topology.js'

// Layer geometries a pinned runtime computes wrongly (so the element reference,
// which has TensorFlow's semantics, would rule against every honest solver of
// the program). Admissibility refuses them (admissible.ts); each is measured
// against the runtime in test/adversarial/conv-same-padding.test.ts.
//
// tfjs-wasm@4.22.0-simd's Conv2D hands 'same' padding to XNNPACK, which
// computes TensorFlow's total padding (⌈n/s⌉ − 1)·s + k − n itself, unsigned:
// where it is negative (a stride larger than the kernel reaching past the
// input; TensorFlow pads nothing) it underflows and the whole output is +0.
// A 1×1 kernel takes another XNNPACK path and is right. psk1 has its own
// Conv2D (psk-kernels.ts) and is not affected.

const pairOf = (v: unknown, dflt: [number, number]): [number, number] =>
  typeof v === 'number' ? [v, v] : Array.isArray(v) && v.length === 2 ? [Number(v[0]), Number(v[1])] : dflt
const outOf = (n: number, k: number, s: number, same: boolean): number => same ? Math.ceil(n / s) : Math.ceil((n - k + 1) / s)
/** TensorFlow's SAME padding along one axis is negative: the last window ends before the input does. */
const pastInput = (n: number, k: number, s: number): boolean => (Math.ceil(n / s) - 1) * s + k < n

/** Whether tfjs-wasm@4.22.0-simd's Conv2D with 'same' padding outputs zeros for input [h, w], kernel k and strides s. */
export function wasmSameConvZeroes (hw: readonly [number, number], k: readonly [number, number], s: readonly [number, number]): boolean {
  return (k[0] > 1 || k[1] > 1) && (pastInput(hw[0], k[0], s[0]) || pastInput(hw[1], k[1], s[1]))
}

/** Why the runtime cannot run validated program `p` as its reference says, if it cannot. */
export function runtimeQuirk (p: Pick<TaskProgram, 'runtime' | 'model'> & { info: Pick<TopologyInfo, 'inputShape'> }): string | undefined {
  if (p.runtime !== WASM_RUNTIME) return undefined
  const layers = (p.model.topology?.config.layers ?? []) as LayerJson[]
  let shape = [...p.info.inputShape]
  for (let i = 0; i < layers.length; i++) {
    const { class_name: kind, config: c } = layers[i]
    if (kind === 'Conv2D' || kind === 'MaxPooling2D') {
      const [H, W, C] = shape
      const k = pairOf(kind === 'Conv2D' ? c.kernel_size : c.pool_size, [2, 2])
      const s = pairOf(c.strides, kind === 'Conv2D' ? [1, 1] : k)
      const same = c.padding === 'same'
      if (kind === 'Conv2D' && same && wasmSameConvZeroes([H, W], k, s)) {
        return `layer ${i} (Conv2D): ${WASM_RUNTIME} computes zeros for 'same' padding where the stride (${s.join('x')}) carries the ${k.join('x')} kernel's last window past the input [${H},${W}] (use 'valid' padding, which gives the same output shape here, or ${WASM_RUNTIME}+psk1)`
      }
      shape = [outOf(H, k[0], s[0], same), outOf(W, k[1], s[1], same), kind === 'Conv2D' ? Number(c.filters) : C]
    } else if (kind === 'Flatten') shape = [shape.reduce((a, b) => a * b, 1)]
    else if (kind === 'Reshape') shape = (c.target_shape as number[]).map(Number)
    else if (kind === 'Dense') shape = [Number(c.units)]
  }
  return undefined
}
