import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { sha256, toHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { WASM_PSK_RUNTIME, WASM_RUNTIME, admissibility, newProgram, validateProgram, type TaskProgram } from '../../protocols/program/index.js'
import { wasmSameConvZeroes } from '../../protocols/program/runtime-quirks.js'
import type { LayerJson } from '../../protocols/program/topology.js'
import { buildElementClaim, checkElementClaim } from '../../protocols/reference/claim.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { Trainer } from '../../node/train/trainer.js'
import { tapeStep, type StepTape } from '../../node/train/tape-recorder.js'
import { Harness } from '../unit/chain/harness.js'
import { check } from '../unit/protocols/ref-check.js'

// A Conv2D with 'same' padding whose stride is larger than the kernel reaches
// past the input (⌈n/s⌉ − 1)·s + k < n: TensorFlow pads nothing there. On
// tfjs-wasm@4.22.0-simd, XNNPACK computes the SAME padding itself, unsigned:
// it underflows and the kernel's whole output is +0, while the element
// reference (TensorFlow's semantics) convolves. Who gains: anyone disputing an
// honest solver of such a task (a griefer, or the submitter that wrote the
// program): every element claim on the Conv2D output wins, the solver is
// slashed and the task fails, the escrow back to the submitter. The chain must
// refuse the program on that runtime (psk1's own Conv2D convolves right).

const g = { class_name: 'GlorotUniform', config: { seed: null } }
/** 784 → [28, 28, 1] → Conv2D 3×3 stride 4 → [7, 7, 2] → Dense 10: (7 − 1)·4 + 3 = 27 < 28 */
const layers = (padding: string): LayerJson[] => [
  { class_name: 'Reshape', config: { name: 'r', batch_input_shape: [null, 784], target_shape: [28, 28, 1] } },
  { class_name: 'Conv2D', config: { name: 'c', filters: 2, kernel_size: [3, 3], strides: [4, 4], padding, activation: 'relu', kernel_initializer: g } },
  { class_name: 'Flatten', config: { name: 'f' } },
  { class_name: 'Dense', config: { name: 'd', units: 10, activation: 'linear', kernel_initializer: g } }
]
const ds = syntheticDataset(7, 64, 8)
function program (padding: string, runtime = WASM_RUNTIME): TaskProgram {
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 2, optimizer: 'sgd', batchSize: 1, seed: 3, checkpointEvery: 1, runtime })
  p.model = { name: 'strided', topology: { class_name: 'Sequential', config: { layers: layers(padding) } } }
  return p
}

let tape: StepTape
beforeAll(async () => {
  await initBackend('wasm', WASM_RUNTIME)
  const t = await Trainer.create(program('same'), ds)
  try { tape = tapeStep(t) } finally { t.dispose() }
}, 120_000)

describe('Conv2D with same padding past the input on tfjs-wasm', () => {
  it('premise: the runtime\'s honest Conv2D output is +0 where the reference convolves, so the honest bits lose an element claim', () => {
    const i = tape.entries.findIndex(e => e.kernel === 'Conv2D')
    expect(i).toBeGreaterThanOrEqual(0)
    const out = tape.values[i].outputs[0].values as Float32Array
    expect(out.every(v => Object.is(v, 0))).toBe(true)
    const claim = buildElementClaim(WASM_RUNTIME, tape.entries[i], tape.values[i].inputs, 0, 0)
    const v = checkElementClaim(WASM_RUNTIME, tape.entries[i], claim)
    expect(v.valid).toBe(false)
    expect(v.expected).not.toBe(0)
  })

  it('the rule is the runtime\'s: on a grid of geometries, the reference fails exactly where wasmSameConvZeroes says', () => {
    let seed = 7
    const rand = (): number => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 2 ** 32 - 0.5 }
    const x = (shape: number[]): TensorData => ({ shape, dtype: 'float32', values: new Float32Array(shape.reduce((a, b) => a * b, 1)).map(rand) })
    let zeroes = 0; let n = 0
    const grid: Array<[number, number, number, number, number, number]> = []
    for (const H of [1, 3, 6, 7]) for (const W of [2, 5, 9]) for (const kh of [1, 2, 3]) for (const kw of [1, 3]) {
      for (const sh of [1, 2, 4]) for (const sw of [1, 3, 5]) grid.push([H, W, kh, kw, sh, sw])
    }
    for (const [H, W, kh, kw, sh, sw] of grid) {
      let wrong = false
      const attrs = { strides: [sh, sw], pad: 'same', dataFormat: 'NHWC', dilations: [1, 1] }
      try { check(WASM_RUNTIME, 'Conv2D', ['x', 'filter'], [x([1, H, W, 2]), x([kh, kw, 2, 2])], attrs, 20) } catch { wrong = true }
      expect(wrong, `${H}x${W} kernel ${kh}x${kw} strides ${sh}x${sw}`).toBe(wasmSameConvZeroes([H, W], [kh, kw], [sh, sw]))
      if (wrong) zeroes++
      n++
    }
    expect(zeroes).toBeGreaterThan(20)
    expect(n - zeroes).toBeGreaterThan(20)
  })

  it('the chain refuses such a program (ProgramNotVerifiable); valid padding, or psk1\'s Conv2D, is admitted', async () => {
    expect(admissibility(validateProgram(program('same')), reference.supportsElement).reason).toMatch(/same.*padding/)
    expect(admissibility(validateProgram(program('valid')), reference.supportsElement).ok).toBe(true)
    expect(admissibility(validateProgram(program('same', WASM_PSK_RUNTIME)), reference.supportsElement).ok).toBe(true)
    const h = await Harness.create({ reference })
    const submit = (p: TaskProgram): string | undefined => {
      const bytes = new TextEncoder().encode(canonicalJson(p))
      return h.run('Alice', 'Arbitration', 'submit_task', {
        programHash: '0x' + toHex(sha256(bytes)), program: u8aToHex(bytes), datasetRoot: '0x' + '11'.repeat(32), skeletonRoot: '0x' + '22'.repeat(32),
        steps: p.steps, checkpointEvery: p.checkpointEvery, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT,
        verifierCount: 2, challengeWindow: 50, solveTimeout: 20
      }).error
    }
    expect(submit(program('same'))).toBe('Arbitration.ProgramNotVerifiable')
    expect(submit(program('valid'))).toBeUndefined()
  }, 60_000)
})
