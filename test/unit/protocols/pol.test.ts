import { describe, expect, it } from 'vitest'
import { stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { buildCheckpoint, buildProof, manifestHash, openCheckpoint, proveStepRoot, validateProof, verifyStepRoot } from '../../../protocols/pol/index.js'

const tensors = (): TensorData[] => [
  { shape: [3, 4], dtype: 'float32', values: Float32Array.from({ length: 12 }, (_, i) => i / 7) },
  { shape: [4], dtype: 'float32', values: Float32Array.of(1, 2, 3, 4) },
  { shape: [], dtype: 'float32', values: Float32Array.of(0.9) }
]

describe('protocols/pol', () => {
  it('proof root commits to every step root; step proofs verify', () => {
    const roots = [0, 1, 2, 3, 4].map(s => toHex(stateRoot(tensors(), s)))
    const p = buildProof('cd'.repeat(32), 'tfjs-wasm@4.22.0-simd', roots, [{ step: 0, manifestHash: 'ef'.repeat(32) }])
    expect(validateProof(JSON.parse(JSON.stringify(p)))).toEqual(p)
    expect(p.steps).toBe(4)
    const sib = proveStepRoot(p, 3)
    expect(verifyStepRoot(p.proofRoot, 3, roots[3], sib)).toBe(true)
    expect(verifyStepRoot(p.proofRoot, 2, roots[3], sib)).toBe(false)
    const bad = { ...p, stateRoots: [...roots] }; bad.stateRoots[2] = roots[1]
    expect(() => validateProof(bad)).toThrow(/proofRoot/)
  })

  it('checkpoints round-trip and detect tampering', () => {
    const { manifest, data } = buildCheckpoint('cd'.repeat(32), 7, ['w', 'b', 's'], tensors())
    const back = openCheckpoint(JSON.parse(JSON.stringify(manifest)), data, { manifestHash: manifestHash(manifest) })
    expect(back.tensors.map(t => Array.from(t.values))).toEqual(tensors().map(t => Array.from(t.values)))
    expect(manifest.stateRoot).toBe(toHex(stateRoot(tensors(), 7)))
    const flipped = data.slice(); flipped[5] ^= 1
    expect(() => openCheckpoint(manifest, flipped)).toThrow(/hash mismatch/)
    expect(() => openCheckpoint({ ...manifest, step: 8 }, data)).toThrow(/state root mismatch/)
    expect(() => openCheckpoint(manifest, data, { programHash: '00'.repeat(32) })).toThrow(/belongs to program/)
  })
  it('a state lying back to back in one buffer (a state slot) is the checkpoint\'s data as it is; any other layout is copied', () => {
    const ts = tensors()
    const slot = new Float32Array(new SharedArrayBuffer(17 * 4))
    let off = 0
    const inSlot = ts.map(t => { const v = slot.subarray(off, off + t.values.length); v.set(t.values); off += t.values.length; return { ...t, values: v } })
    const fromSlot = buildCheckpoint('cd'.repeat(32), 7, ['w', 'b', 's'], inSlot)
    const copied = buildCheckpoint('cd'.repeat(32), 7, ['w', 'b', 's'], ts)
    expect(fromSlot.data.buffer).toBe(slot.buffer)
    expect(Array.from(fromSlot.data)).toEqual(Array.from(copied.data))
    expect(manifestHash(fromSlot.manifest)).toBe(manifestHash(copied.manifest))
    // the same buffer out of order is not the state's layout: copied into place
    const swapped = [inSlot[0], inSlot[2], inSlot[1]]
    const other = buildCheckpoint('cd'.repeat(32), 7, ['w', 's', 'b'], swapped)
    expect(other.data.buffer).not.toBe(slot.buffer)
    expect(openCheckpoint(other.manifest, other.data).tensors.map(t => Array.from(t.values))).toEqual(swapped.map(t => Array.from(t.values)))
  })
})
