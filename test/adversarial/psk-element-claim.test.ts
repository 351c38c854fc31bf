import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady, sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, sha256, toHex, type TensorData } from '../../protocols/commit/index.js'
import { decodeClaim, encodeClaim, judgeClaim, type JudgeEnv, type Ruling } from '../../protocols/dispute/index.js'
import { WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../protocols/program/runtime.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { elementClaim, substitute } from '../helpers/element-claim.js'
import { bitsAt, f32FromBits, hex, operandSlice, runBackend } from '../unit/protocols/ref-check.js'

// The runtime is part of the program the chain holds (its hash is the
// task's), and the chain judges an element with that runtime's reference. A
// solver on tfjs-wasm@4.22.0-simd+psk1 cannot commit another arithmetic's
// bits (XNNPACK's blocked sums, the old float64 Conv2DBackpropFilter, x86's
// negative NaN) for a psk1 op and win, nor psk1 bits on a task pinned to the
// old runtime: the chain's ruling (judgeClaim, the pure adjudication the
// runtime runs) goes against the defender by one element.

const kr = new Keyring({ type: 'sr25519' })
const GENESIS = new Uint8Array(32).fill(0x11)
const step = 3
const stateRoots = Array.from({ length: 8 }, (_, i) => toHex(sha256(Uint8Array.of(i))))
let verify: JudgeEnv['verify']

const programOf = (runtime: string): Uint8Array => new TextEncoder().encode(
  JSON.stringify({ runtime, seed: 1, batchSize: 1, dataset: { trainSize: 1, rowSize: 1, classes: 1 } })
)

function ruling (
  runtime: string, kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown>,
  output: TensorData, flat: number, env: Partial<JudgeEnv> = {}
): Ruling {
  const bob = kr.addFromUri('//Bob'); const dave = kr.addFromUri('//Dave')
  const program = programOf(runtime)
  const claim = elementClaim({ runtime, program, kernel, names, inputs, attrs, output, flat, step, stateRoots, genesis: GENESIS, defender: bob })
  const base: JudgeEnv = {
    disputeId: 0, genesis: GENESIS, taskId: 0, stepCount: stateRoots.length - 1, step, challenger: dave.publicKey, defender: bob.publicKey, caller: 'challenger', programHash: sha256(program),
    datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32), proofRoot: merkleRoot(stateRoots.map(fromHex)), reference, verify
  }
  return judgeClaim({ ...base, ...env }, decodeClaim(encodeClaim(claim)))
}

/** The element's bits under `runtime`'s reference. */
function refBits (runtime: string, kernel: string, inputs: TensorData[], attrs: Record<string, unknown>, output: TensorData, flat: number): number {
  const op = { kernel, attrs, inputs: inputs.map(t => ({ shape: t.shape, dtype: t.dtype })), output: { shape: output.shape, dtype: output.dtype } }
  return reference.computeElementBits(runtime, op, flat, reference.elementOperands(runtime, op, flat).map(o => operandSlice(inputs[o.input], o)))
}

let s = 4242
const rnd = (): number => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32 }
const randT = (shape: number[]): TensorData => ({ shape, dtype: 'float32', values: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rnd() * 2 - 1) })

beforeAll(async () => {
  await cryptoWaitReady()
  verify = (m, sig, p) => { try { return sr25519Verify(m, sig, p) } catch { return false } }
  await initBackend('wasm', WASM_PSK_RUNTIME)
})

describe('psk1 ops judged on chain with the psk1 reference', () => {
  const cases = [
    { kernel: 'BatchMatMul', names: ['a', 'b'], inputs: [randT([1, 100, 6]), randT([1, 100, 5])], attrs: { transposeA: true, transposeB: false } },
    { kernel: 'Conv2DBackpropFilter', names: ['x', 'dy'], inputs: [randT([4, 12, 12, 2]), randT([4, 10, 10, 3])], attrs: { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', filterShape: [3, 3, 2, 3] } }
  ]
  for (const c of cases) {
    it(`${c.kernel}: the kernel's bits win; a flipped bit and the old runtime's arithmetic lose, and psk1 bits lose on a task pinned to the old runtime`, () => {
      const out = runBackend(c.kernel, c.names, c.inputs, c.attrs)
      const n = out.values.length
      // elements where the old runtime's reference computes other bits: the solver's temptation
      const differ = Array.from({ length: n }, (_, i) => i).filter(i => refBits(WASM_RUNTIME, c.kernel, c.inputs, c.attrs, out, i) !== bitsAt(out.values, i))
      expect(differ.length).toBeGreaterThan(0)
      const flat = differ[0]
      const honest = bitsAt(out.values, flat)
      expect(ruling(WASM_PSK_RUNTIME, c.kernel, c.names, c.inputs, c.attrs, out, flat).winner).toBe('defender')
      expect(ruling(WASM_PSK_RUNTIME, c.kernel, c.names, c.inputs, c.attrs, substitute(out, flat, (honest ^ 1) >>> 0), flat).winner).toBe('challenger')
      const old = refBits(WASM_RUNTIME, c.kernel, c.inputs, c.attrs, out, flat)
      expect(hex(old)).not.toBe(hex(honest))
      expect(ruling(WASM_PSK_RUNTIME, c.kernel, c.names, c.inputs, c.attrs, substitute(out, flat, old), flat).winner).toBe('challenger')
      // the same commitment on a task that pins the old runtime: judged with that runtime's arithmetic
      expect(ruling(WASM_RUNTIME, c.kernel, c.names, c.inputs, c.attrs, out, flat).winner).toBe('challenger')
      expect(ruling(WASM_RUNTIME, c.kernel, c.names, c.inputs, c.attrs, substitute(out, flat, old), flat).winner).toBe('defender')
    })
  }

  it('a NaN generated inside a psk1 sum (Inf - Inf) is 0x7fc00000 at the divergence point: x86\'s 0xffc00000 or a number loses', () => {
    const a = f32FromBits([0x3f800000, 0x3f800000], [1, 2]); const b = f32FromBits([0x7f800000, 0x3f800000, 0xff800000, 0x3f800000], [2, 2])
    const attrs = { transposeA: false, transposeB: false }
    const out = runBackend('BatchMatMul', ['a', 'b'], [a, b], attrs)
    expect(hex(bitsAt(out.values, 0))).toBe(hex(reference.CANONICAL_NAN))
    const diverged = { stepCount: step, proofRoot: merkleRoot(stateRoots.slice(0, step + 1).map(fromHex)), divergence: { entry: 1, flat: 0 } }
    expect(ruling(WASM_PSK_RUNTIME, 'BatchMatMul', ['a', 'b'], [a, b], attrs, out, 0, diverged).winner).toBe('defender')
    for (const bits of [0xffc00000, 0x7fc00001, 0x7f800000]) expect(ruling(WASM_PSK_RUNTIME, 'BatchMatMul', ['a', 'b'], [a, b], attrs, substitute(out, 0, bits), 0, diverged).winner).toBe('challenger')
  })
})
