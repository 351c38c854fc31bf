import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady, sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, sha256, toHex, type TensorData } from '../../protocols/commit/index.js'
import { decodeClaim, encodeClaim, judgeClaim, type JudgeEnv, type Ruling } from '../../protocols/dispute/index.js'
import { WASM_RUNTIME } from '../../protocols/program/runtime.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { elementClaim, substitute } from '../helpers/element-claim.js'
import { bitsAt, f32FromBits, hex, operandSlice, runBackend } from '../unit/protocols/ref-check.js'

// The attack on NaN bits. A NaN ends the run (protocols/dispute/nan.ts):
// (1) an element claim whose proven operands (state or op inputs) hold a NaN,
// or whose proven output does, rules against the defender before the
// reference runs, so the reference's AmbiguousNaN (two different NaNs meeting
// in a C++ loop, whose survivor changes with V8's tier-up) never decides a
// ruling; (2) at a diverged proof's divergence point, where the operands are
// NaN-free, the NaN generated there is compared bit for bit: the real
// backend's bits win, another NaN (e.g. JS's canonical 0x7fc00000) or a
// non-NaN loses; (3) past the divergence point the challenger loses.

const POS_NAN = 0x7fc00000; const NEG_NAN = 0xffc00000
const kr = new Keyring({ type: 'sr25519' })
let base: JudgeEnv
const GENESIS = new Uint8Array(32).fill(0x11)
const program = new TextEncoder().encode(JSON.stringify({ runtime: WASM_RUNTIME, seed: 1, batchSize: 1, dataset: { trainSize: 1, rowSize: 1, classes: 1 } }))
const step = 3
const stateRoots = Array.from({ length: 8 }, (_, i) => toHex(sha256(Uint8Array.of(i))))
/** a diverged proof: its last step is `step`, taped up to entry `entry`, element `flat` */
const diverged = (entry: number, flat: number): Partial<JudgeEnv> => ({
  stepCount: step, proofRoot: merkleRoot(stateRoots.slice(0, step + 1).map(fromHex)), divergence: { entry, flat }
})

/** The chain's ruling on an element claim about element `flat` of `kernel`(inputs) at entry 1 when the defender committed `output`. */
function ruling (
  kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown>, output: TensorData, flat: number, env: Partial<JudgeEnv> = {}
): Ruling {
  const bob = kr.addFromUri('//Bob')
  const claim = elementClaim({ runtime: WASM_RUNTIME, program, kernel, names, inputs, attrs, output, flat, step, stateRoots, genesis: GENESIS, defender: bob })
  return judgeClaim({ ...base, ...env }, decodeClaim(encodeClaim(claim)))
}
const rule = (...a: Parameters<typeof ruling>): 'defender' | 'challenger' => ruling(...a).winner

interface Case { kernel: string, names: string[], inputs: TensorData[], attrs?: Record<string, unknown>, flat: number, expect: number, cheats: number[] }

beforeAll(async () => {
  await cryptoWaitReady()
  await initBackend('wasm')
  const dave = kr.addFromUri('//Dave'); const bob = kr.addFromUri('//Bob')
  base = {
    disputeId: 0, genesis: GENESIS, taskId: 0, stepCount: stateRoots.length - 1, step, challenger: dave.publicKey, defender: bob.publicKey, caller: 'challenger', programHash: sha256(program),
    datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32), proofRoot: merkleRoot(stateRoots.map(fromHex)), reference,
    verify: (m, s, p) => { try { return sr25519Verify(m, s, p) } catch { return false } }
  }
})

describe('NaNs generated from NaN-free operands: exact at the divergence point, a lost dispute anywhere else', () => {
  const x = f32FromBits([0xbf800000, 0xff800000, 0x80000000, 0x40000000, 0x00000000, 0x7f800000], [2, 3]) // -1, -Inf, -0, 2, +0, +Inf
  const cases: Case[] = [
    // log(-1) = 0/0 in musl: the x86 default NaN, negative; JS's NaN is positive
    { kernel: 'Log', names: ['x'], inputs: [x], flat: 0, expect: NEG_NAN, cheats: [POS_NAN, 0xffc00001, 0xff800000] },
    { kernel: 'Log', names: ['x'], inputs: [x], flat: 1, expect: NEG_NAN, cheats: [POS_NAN, 0xff800000] },
    { kernel: 'Sqrt', names: ['x'], inputs: [x], flat: 0, expect: NEG_NAN, cheats: [POS_NAN, 0] },
    // 0 * Inf and -Inf + Inf are invalid: default NaN
    { kernel: 'Multiply', names: ['a', 'b'], inputs: [f32FromBits([0, 0x3f800000]), f32FromBits([0x7f800000, 0x3f800000])], flat: 0, expect: NEG_NAN, cheats: [POS_NAN, 0] },
    { kernel: 'Add', names: ['a', 'b'], inputs: [f32FromBits([0xff800000, 0]), f32FromBits([0x7f800000, 0])], flat: 0, expect: NEG_NAN, cheats: [POS_NAN, 0x7f800000] }
  ]
  for (const c of cases) {
    it(`${c.kernel} element ${c.flat}: at the divergence point the backend's ${hex(c.expect)} wins, ${c.cheats.map(hex).join(', ')} lose; in a completed step it loses`, () => {
      const out = runBackend(c.kernel, c.names, c.inputs, c.attrs ?? {})
      // the case states what the real backend does (it fails if the runtime changes)
      expect(hex(bitsAt(out.values, c.flat))).toBe(hex(c.expect))
      expect(rule(c.kernel, c.names, c.inputs, c.attrs ?? {}, out, c.flat, diverged(1, c.flat))).toBe('defender')
      for (const bits of c.cheats) expect(rule(c.kernel, c.names, c.inputs, c.attrs ?? {}, substitute(out, c.flat, bits), c.flat, diverged(1, c.flat))).toBe('challenger')
      // a completed step has no NaN: the honest bits lose there, decided before the reference
      const r = ruling(c.kernel, c.names, c.inputs, c.attrs ?? {}, out, c.flat)
      expect(r.winner).toBe('challenger')
      expect(r.reason).toMatch(/^NaN in a committed tensor/)
    })
  }

  it('signed zeros from NaN-free operands are judged bit for bit in any step', () => {
    const out = runBackend('Sqrt', ['x'], [x], {})
    expect(hex(bitsAt(out.values, 2))).toBe(hex(0x80000000))
    // x's leaf holds no NaN but the output's does (sqrt(-1) at element 0): judged at an element past the divergence point's
    expect(rule('Sqrt', ['x'], [x], {}, out, 2, diverged(1, 0))).toBe('defender')
    expect(rule('Sqrt', ['x'], [x], {}, substitute(out, 2, 0), 2, diverged(1, 0))).toBe('challenger')
    const relu = runBackend('Relu', ['x'], [x], {})
    expect(hex(bitsAt(relu.values, 2))).toBe(hex(0))
    expect(rule('Relu', ['x'], [x], {}, relu, 2)).toBe('defender')
    expect(rule('Relu', ['x'], [x], {}, substitute(relu, 2, 0x80000000), 2)).toBe('challenger')
  })

  it('a NaN before the divergence point\'s element, or none at it, loses for the defender', () => {
    const out = runBackend('Log', ['x'], [x], {})
    // the proof says the first NaN is element 1; element 0 is a NaN too
    expect(ruling('Log', ['x'], [x], {}, out, 0, diverged(1, 1)).reason).toMatch(/before the divergence point/)
    // the proof says element 3 (log 2) is where the run diverged
    expect(ruling('Log', ['x'], [x], {}, out, 3, diverged(1, 3)).reason).toMatch(/holds no NaN/)
  })

  it('past the divergence point the challenger loses, whatever the defender committed', () => {
    const out = runBackend('Log', ['x'], [x], {})
    for (const bits of [NEG_NAN, POS_NAN, 0]) expect(rule('Log', ['x'], [x], {}, substitute(out, 0, bits), 0, diverged(0, 0))).toBe('defender')
  })
})

describe('a NaN operand loses for the defender before the reference runs', () => {
  const x = f32FromBits([0xbf800000, NEG_NAN, POS_NAN, 0x80000000, 0xff800000, 0x7f800001, 0x40000000, 0x00000000], [2, 4]) // -1, -NaN, +NaN, -0, -Inf, sNaN, 2, +0
  const cases: Case[] = [
    { kernel: 'Relu', names: ['x'], inputs: [x], flat: 1, expect: 0, cheats: [NEG_NAN, POS_NAN] },
    { kernel: 'Relu', names: ['x'], inputs: [x], flat: 6, expect: 0x40000000, cheats: [] },
    { kernel: 'Step', names: ['x'], inputs: [x], attrs: { alpha: 0 }, flat: 1, expect: NEG_NAN, cheats: [POS_NAN, 0] },
    { kernel: 'Neg', names: ['x'], inputs: [x], flat: 1, expect: POS_NAN, cheats: [NEG_NAN] },
    { kernel: 'Add', names: ['a', 'b'], inputs: [f32FromBits([POS_NAN, 0]), f32FromBits([NEG_NAN, 0])], flat: 0, expect: POS_NAN, cheats: [NEG_NAN] },
    { kernel: 'MaxPool', names: ['x'], inputs: [f32FromBits([NEG_NAN, 0x3f800000, 0x40000000, 0xbf800000], [1, 2, 2, 1])], attrs: { filterSize: [2, 2], strides: [2, 2], pad: 'valid' }, flat: 0, expect: 0xff800000, cheats: [NEG_NAN] },
    { kernel: '_FusedMatMul', names: ['a', 'b', 'bias'], inputs: [f32FromBits([0x3f800000, NEG_NAN], [1, 1, 2]), f32FromBits([0x3f800000, 0x3f800000], [1, 2, 1]), f32FromBits([0], [1])], attrs: { transposeA: false, transposeB: false, activation: 'relu' }, flat: 0, expect: 0, cheats: [NEG_NAN] }
  ]
  for (const c of cases) {
    it(`${c.kernel} element ${c.flat} (backend ${hex(c.expect)}): the defender loses with any bits, in a completed step and at a divergence point`, () => {
      const out = runBackend(c.kernel, c.names, c.inputs, c.attrs ?? {})
      expect(hex(bitsAt(out.values, c.flat))).toBe(hex(c.expect))
      for (const o of [out, ...c.cheats.map(b => substitute(out, c.flat, b))]) {
        for (const env of [{}, diverged(1, c.flat)]) {
          const r = ruling(c.kernel, c.names, c.inputs, c.attrs ?? {}, o, c.flat, env)
          expect(r.winner).toBe('challenger')
          expect(r.reason).toMatch(/^NaN in a committed tensor: operand/)
        }
      }
    })
  }

  it('two different NaNs meeting in a transposed MatMul (AmbiguousNaN) never reach the reference: the defender loses, whichever NaN it kept', () => {
    const K = 50
    const a = f32FromBits(Array.from({ length: K }, (_, k) => k === 3 ? 0x7fc00001 : k === 20 ? 0xffc00002 : 0x3f800000), [1, K, 1])
    const b = f32FromBits(new Array(K).fill(0x3f800000), [1, K, 1])
    const attrs = { transposeA: true, transposeB: false }
    const out = runBackend('BatchMatMul', ['a', 'b'], [a, b], attrs)
    const op = { kernel: 'BatchMatMul', attrs, inputs: [{ shape: a.shape, dtype: a.dtype }, { shape: b.shape, dtype: b.dtype }], output: { shape: out.shape, dtype: out.dtype }, outputIndex: 0 }
    const operands = reference.elementOperands(WASM_RUNTIME, op, 0).map(o => operandSlice([a, b][o.input], o))
    // the reference refuses this element: the case is the ambiguous one
    expect(() => reference.computeElementBits(WASM_RUNTIME, op, 0, operands)).toThrow(/two different NaNs/)
    for (const bits of [0x7fc00001, 0xffc00002]) {
      const r = ruling('BatchMatMul', ['a', 'b'], [a, b], attrs, substitute(out, 0, bits), 0)
      expect(r.winner).toBe('challenger')
      expect(r.reason).toMatch(/^NaN in a committed tensor/)
    }
  })
})
