import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady, sr25519Verify } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { commitTensor, fromHex, merkleRoot, proveSlice, sha256, toHex, type TensorData } from '../../protocols/commit/index.js'
import { DefenderGame, decodeClaim, encodeClaim, encodeEntryBytes, judgeClaim, pathWith, treeLevels, type Claim, type JudgeEnv } from '../../protocols/dispute/index.js'
import { WASM_RUNTIME } from '../../protocols/program/runtime.js'
import * as reference from '../../protocols/reference/index.js'
import type { TraceEntry } from '../../protocols/trace/trace.js'
import { initBackend } from '../../node/train/backend.js'
import { bitsAt, f32FromBits, hex, runBackend } from '../unit/protocols/ref-check.js'

// The attack on NaN bits: the chain compares the defender's committed element
// with the reference bit for bit. An element claim on an op whose output is a
// NaN or a signed zero must rule for the honest party: a defender whose
// output is the real backend's bits wins, one that substitutes another NaN
// (e.g. JS's canonical 0x7fc00000) or zero pattern loses.

const POS_NAN = 0x7fc00000; const NEG_NAN = 0xffc00000
const kr = new Keyring({ type: 'sr25519' })
let env: JudgeEnv
const GENESIS = new Uint8Array(32).fill(0x11)
const program = new TextEncoder().encode(JSON.stringify({ runtime: WASM_RUNTIME, seed: 1, batchSize: 1, dataset: { trainSize: 1, rowSize: 1, classes: 1 } }))
const step = 3
const stateRoots = Array.from({ length: 8 }, (_, i) => toHex(sha256(Uint8Array.of(i))))

/** The chain's ruling on an element claim about element `flat` of `kernel`(inputs) when the defender committed `output`. */
function rule (kernel: string, names: string[], inputs: TensorData[], attrs: Record<string, unknown>, output: TensorData, flat: number): 'defender' | 'challenger' {
  const bob = kr.addFromUri('//Bob')
  const entry = (index: number): TraceEntry => ({
    index, kernel, attrs,
    inputs: inputs.map((t, k) => ({ name: names[k], ref: { kind: 'state', index: k }, dtype: t.dtype, shape: t.shape, commitment: toHex(commitTensor(t).root) })),
    outputs: [{ dtype: output.dtype, shape: output.shape, commitment: toHex(commitTensor(output).root) }]
  }) as TraceEntry
  const entries = Array.from({ length: 4 }, (_, i) => entry(i))
  const D = new DefenderGame({ disputeId: 0, genesis: GENESIS, taskId: 0, step, entries, tensor: (_e, io, k) => io === 'out' ? output : inputs[k], account: bob.publicKey, sign: m => bob.sign(m), stateRoots })
  const ei = 1
  const op = reference.opShapeOf(entries[ei])
  const cols = output.shape[output.shape.length - 1] ?? 1
  const claim: Claim = {
    v: 1, kind: 'element', commit: D.commit(), index: ei, entry: encodeEntryBytes(entries[ei]), path: pathWith(treeLevels(entries.map(e => sha256(encodeEntryBytes(e)))), new Map(), ei), program, flat,
    slice: proveSlice(output, 'row', Math.floor(flat / cols)),
    operands: reference.elementOperands(WASM_RUNTIME, op, flat).map(o => proveSlice(inputs[o.input], o.axis, o.index))
  }
  return judgeClaim(env, decodeClaim(encodeClaim(claim))).winner
}

/** The backend's output with element `flat` replaced by `bits`. */
function substitute (out: TensorData, flat: number, bits: number): TensorData {
  const v = new Uint32Array((out.values as Float32Array).slice().buffer)
  v[flat] = bits
  return { ...out, values: new Float32Array(v.buffer) }
}

interface Case { kernel: string, names: string[], inputs: TensorData[], attrs?: Record<string, unknown>, flat: number, expect: number, cheats: number[] }

describe('element claims on NaN and signed-zero results rule for the honest party', () => {
  beforeAll(async () => {
    await cryptoWaitReady()
    await initBackend('wasm')
    const dave = kr.addFromUri('//Dave'); const bob = kr.addFromUri('//Bob')
    env = {
      disputeId: 0, genesis: GENESIS, taskId: 0, stepCount: stateRoots.length - 1, step, challenger: dave.publicKey, defender: bob.publicKey, caller: 'challenger', programHash: sha256(program),
      datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32), proofRoot: merkleRoot(stateRoots.map(fromHex)), reference,
      verify: (m, s, p) => { try { return sr25519Verify(m, s, p) } catch { return false } }
    }
  })

  const x = f32FromBits([0xbf800000, NEG_NAN, POS_NAN, 0x80000000, 0xff800000, 0x7f800001, 0x40000000, 0x00000000], [2, 4]) // -1, -NaN, +NaN, -0, -Inf, sNaN, 2, +0
  const cases: Case[] = [
    // log(-1) = 0/0 in musl: the x86 default NaN, negative; JS's NaN is positive
    { kernel: 'Log', names: ['x'], inputs: [x], flat: 0, expect: NEG_NAN, cheats: [POS_NAN, 0xffc00001] },
    { kernel: 'Log', names: ['x'], inputs: [x], flat: 4, expect: NEG_NAN, cheats: [POS_NAN, 0xff800000] },
    { kernel: 'Log', names: ['x'], inputs: [x], flat: 5, expect: 0x7fc00001, cheats: [POS_NAN, 0x7f800001] },
    // relu is an integer max on the bits: -NaN and -0 give +0, +NaN stays
    { kernel: 'Relu', names: ['x'], inputs: [x], flat: 1, expect: 0, cheats: [NEG_NAN, POS_NAN, 0x80000000] },
    { kernel: 'Relu', names: ['x'], inputs: [x], flat: 2, expect: POS_NAN, cheats: [0, NEG_NAN] },
    { kernel: 'Relu', names: ['x'], inputs: [x], flat: 3, expect: 0, cheats: [0x80000000] },
    // step passes a NaN through untouched (no quietening)
    { kernel: 'Step', names: ['x'], inputs: [x], attrs: { alpha: 0 }, flat: 1, expect: NEG_NAN, cheats: [POS_NAN, 0] },
    { kernel: 'Step', names: ['x'], inputs: [x], attrs: { alpha: 0 }, flat: 5, expect: 0x7f800001, cheats: [0x7fc00001] },
    { kernel: 'Sqrt', names: ['x'], inputs: [x], flat: 0, expect: NEG_NAN, cheats: [POS_NAN] },
    { kernel: 'Sqrt', names: ['x'], inputs: [x], flat: 3, expect: 0x80000000, cheats: [0] },
    { kernel: 'Neg', names: ['x'], inputs: [x], flat: 1, expect: POS_NAN, cheats: [NEG_NAN] },
    // 0 * Inf and -Inf + Inf are invalid: default NaN
    { kernel: 'Multiply', names: ['a', 'b'], inputs: [f32FromBits([0, 0x3f800000]), f32FromBits([0x7f800000, 0x3f800000])], flat: 0, expect: NEG_NAN, cheats: [POS_NAN] },
    { kernel: 'Add', names: ['a', 'b'], inputs: [f32FromBits([0xff800000, 0]), f32FromBits([0x7f800000, 0])], flat: 0, expect: NEG_NAN, cheats: [POS_NAN] },
    // two NaNs: the first operand's, except that XNNPACK swaps a broadcast first operand of a commutative op
    { kernel: 'Add', names: ['a', 'b'], inputs: [f32FromBits([POS_NAN, 0]), f32FromBits([NEG_NAN, 0])], flat: 0, expect: POS_NAN, cheats: [NEG_NAN] },
    { kernel: 'Add', names: ['a', 'b'], inputs: [f32FromBits([POS_NAN], []), f32FromBits([NEG_NAN, 0])], flat: 0, expect: NEG_NAN, cheats: [POS_NAN] },
    // a NaN in a max-pool window becomes -Inf through XNNPACK's output clamp, or is skipped
    { kernel: 'MaxPool', names: ['x'], inputs: [f32FromBits([NEG_NAN, 0x3f800000, 0x40000000, 0xbf800000], [1, 2, 2, 1])], attrs: { filterSize: [2, 2], strides: [2, 2], pad: 'valid' }, flat: 0, expect: 0xff800000, cheats: [NEG_NAN, 0x40000000] },
    // a NaN into a relu-fused matmul gives +0
    { kernel: '_FusedMatMul', names: ['a', 'b', 'bias'], inputs: [f32FromBits([0x3f800000, NEG_NAN], [1, 1, 2]), f32FromBits([0x3f800000, 0x3f800000], [1, 2, 1]), f32FromBits([0], [1])], attrs: { transposeA: false, transposeB: false, activation: 'relu' }, flat: 0, expect: 0, cheats: [NEG_NAN, POS_NAN] }
  ]

  for (const c of cases) {
    it(`${c.kernel} element ${c.flat}: the backend's ${hex(c.expect)} wins, ${c.cheats.map(hex).join(', ')} lose`, () => {
      const out = runBackend(c.kernel, c.names, c.inputs, c.attrs ?? {})
      // the case states what the real backend does (it fails if the runtime changes)
      expect(hex(bitsAt(out.values, c.flat))).toBe(hex(c.expect))
      expect(rule(c.kernel, c.names, c.inputs, c.attrs ?? {}, out, c.flat)).toBe('defender')
      for (const bits of c.cheats) expect(rule(c.kernel, c.names, c.inputs, c.attrs ?? {}, substitute(out, c.flat, bits), c.flat)).toBe('challenger')
    })
  }
})
