import { encode } from 'cborg'
import { describe, expect, it } from 'vitest'
import { merkleRoot, sha256, toHex } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import type { TensorData } from '../../../protocols/commit/tensor.js'
import { checkForcedExact, encodeExactness, forcedState, forcedValue, proveExactness, type ExactEnv, type ExactnessProof } from '../../../protocols/dispute/forced-exact.js'

// The exactness rule of a revealed forced error: the committed post-state is
// the honest one with exactly element 0 of state tensor 0 set to |v| + 1.

const STEP = 2
const STEPS = 5

function tensor (shape: number[], seed: number): TensorData {
  const n = shape.reduce((a, b) => a * b, 1)
  const values = new Float32Array(n)
  for (let i = 0; i < n; i++) values[i] = Math.sin(seed * 131 + i * 0.37) * 0.5
  return { shape, dtype: 'float32', values }
}

/** weights and biases of a 2-layer net: tensor 0 spans several row leaves (600 rows of 4) and column leaves are whole columns */
const honest: TensorData[] = [tensor([600, 4], 1), tensor([4], 2), tensor([4, 3], 3), tensor([3], 4)]
honest[0].values[0] = -0.75 // negative: |v| + 1 is not v + 1

function rootsWith (post: TensorData[]): string[] {
  const roots: string[] = []
  for (let s = 0; s <= STEPS; s++) roots.push(toHex(s === STEP + 1 ? stateRoot(post, s) : sha256(Uint8Array.of(s, 1, 2, 3))))
  return roots
}

function envFor (roots: string[]): ExactEnv {
  return { step: STEP, stepCount: STEPS, proofRoot: merkleRoot(roots.map(r => Uint8Array.from(Buffer.from(r, 'hex')))), honestPost: stateRoot(honest, STEP + 1) }
}

/** the solver's proof for a committed post-state `committed` */
function attempt (committed: TensorData[], edit?: (p: ExactnessProof) => void): ReturnType<typeof checkForcedExact> {
  const roots = rootsWith(committed)
  const p = proveExactness(honest, committed, STEP, roots)
  edit?.(p)
  return checkForcedExact(envFor(roots), encodeExactness(p))
}

const withElement = (ts: TensorData[], t: number, i: number, v: number): TensorData[] => ts.map((x, k) => {
  if (k !== t) return x
  const values = x.values.slice(); values[i] = v
  return { ...x, values }
})

describe('forced-error exactness (protocols/dispute/forced-exact.ts)', () => {
  it('accepts the forced error: element 0 of tensor 0 set to |v| + 1, nothing else', () => {
    expect(forcedValue(-0.75)).toBe(1.75)
    const forced = forcedState(honest)
    expect(forced[0].values[0]).toBe(1.75)
    expect(honest[0].values[0]).toBe(-0.75) // the honest state is not modified
    expect(attempt(forced)).toEqual({ ok: true })
    // the proof is small: two leaves per axis and a few paths
    expect(encodeExactness(proveExactness(honest, forced, STEP, rootsWith(forced))).length).toBeLessThan(16 * 1024)
  })

  it('refuses a second element changed, in the same leaves or elsewhere in tensor 0', () => {
    const forced = forcedState(honest)
    // in row leaf 0 (rows 0..127 of 4 values) and, for element 4, in column leaf 0 too
    expect(attempt(withElement(forced, 0, 1, 5))).toMatchObject({ ok: false, reason: expect.stringMatching(/row leaf 0 differs/) })
    expect(attempt(withElement(forced, 0, 4, 5))).toMatchObject({ ok: false, reason: expect.stringMatching(/row leaf 0 differs/) })
    // in another row leaf (row 128, column 0) or far away (row 599, column 3): both leaf 0s look
    // exact, but the committed tensor's paths do not lead the honest leaves to the honest roots
    expect(attempt(withElement(forced, 0, 512, 5))).toMatchObject({ ok: false, reason: 'honest row leaf 0 is not in tensor 0' })
    expect(attempt(withElement(forced, 0, 2399, 5))).toMatchObject({ ok: false, reason: 'honest row leaf 0 is not in tensor 0' })
    // a column leaf that differs beyond element 0
    expect(attempt(forced, p => { p.colForced = p.colForced.slice(); p.colForced[8] ^= 1 })).toMatchObject({ ok: false, reason: expect.stringMatching(/col leaf 0 differs/) })
  })

  it('refuses another tensor changed: one element, or the whole tensor replaced', () => {
    const forced = forcedState(honest)
    expect(attempt(withElement(forced, 2, 5, 9))).toMatchObject({ ok: false, reason: expect.stringMatching(/honest post-state/) })
    const backdoor = forced.map((x, k) => k === 1 ? tensor([4], 99) : x)
    expect(attempt(backdoor)).toMatchObject({ ok: false, reason: expect.stringMatching(/honest post-state/) })
    // or the path is the honest one: then the committed tensor is not on it
    const roots = rootsWith(backdoor)
    const p = proveExactness(honest, backdoor, STEP, roots)
    p.statePath = proveExactness(honest, forced, STEP, rootsWith(forced)).statePath
    expect(checkForcedExact(envFor(roots), encodeExactness(p))).toMatchObject({ ok: false, reason: expect.stringMatching(/committed tensor 0 is not leaf 0/) })
  })

  it('refuses a wrong value at element 0', () => {
    expect(attempt(withElement(honest, 0, 0, -0.75 + 1))).toMatchObject({ ok: false, reason: 'element 0 is not |v| + 1' }) // v + 1
    expect(attempt(withElement(honest, 0, 0, 2.75))).toMatchObject({ ok: false, reason: 'element 0 is not |v| + 1' })
    // an unchanged state is no forced error either (and no state ruling could exist)
    expect(attempt(honest)).toMatchObject({ ok: false, reason: 'element 0 is not |v| + 1' })
  })

  it('refuses wrong paths, heads and shapes', () => {
    const forced = forcedState(honest)
    const bad = (edit: (p: ExactnessProof) => void): ReturnType<typeof checkForcedExact> => attempt(forced, edit)
    expect(bad(p => { p.postPath = p.postPath.slice(1) })).toMatchObject({ ok: false, reason: expect.stringMatching(/proof_root/) })
    expect(bad(p => { p.post = p.post.slice(); p.post[0] ^= 1 })).toMatchObject({ ok: false })
    expect(bad(p => { p.statePath = p.statePath.slice(1) })).toMatchObject({ ok: false })
    expect(bad(p => { p.rowPath = [...p.rowPath, p.rowPath[0]] })).toMatchObject({ ok: false, reason: 'row path has the wrong depth' })
    expect(bad(p => { p.colPath[0] = p.colPath[0].slice(); p.colPath[0][3] ^= 1 })).toMatchObject({ ok: false, reason: expect.stringMatching(/col leaf 0 is not in tensor 0/) })
    expect(bad(p => { p.forced = { ...p.forced, shape: [4, 600] } })).toMatchObject({ ok: false, reason: 'tensor 0 changed shape' })
    expect(bad(p => { p.honest = { ...p.honest, dtype: 'int32' } })).toMatchObject({ ok: false })
    expect(bad(p => { p.rowForced = p.rowForced.subarray(0, 4) })).toMatchObject({ ok: false })
    // a proof for another step of the same run
    const roots = rootsWith(forced)
    expect(checkForcedExact({ ...envFor(roots), step: STEP + 1 }, encodeExactness(proveExactness(honest, forced, STEP, roots)))).toMatchObject({ ok: false })
    expect(checkForcedExact(envFor(roots), encode({ v: 2 }))).toMatchObject({ ok: false })
    expect(checkForcedExact(envFor(roots), Uint8Array.of(0xff))).toMatchObject({ ok: false })
  })
})
