import { describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, sha256, stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { forcedErrorFromOutput } from '../../../protocols/dispute/forced-error.js'
import {
  DEFAULT_ROOT_EVERY, buildProof, committedSpacing, committedStep, defaultRootEvery,
  committedSteps, isCommittedStep, leafCount, leafOfStep, proofDepth, proveStepRoot, rootAtStep, segmentLength,
  segmentOfStep,
  validateProof, verifyStepRoot
} from '../../../protocols/pol/index.js'

const tensors = (): TensorData[] => [{ shape: [2, 2], dtype: 'float32', values: Float32Array.of(1, 2, 3, 4) }]
const rootOf = (s: number): string => toHex(stateRoot(tensors(), s))

describe('protocols/pol: state roots every m steps', () => {
  it('a checkpoint spacing rounded up to a committed step, never past the last one within the steps', () => {
    expect(committedSpacing(10, 1000, 4)).toBe(12)
    expect(committedSpacing(12, 1000, 4)).toBe(12)
    expect(committedSpacing(10, 1000, 1)).toBe(10)
    // 12 would be over the 10 steps (the chain refuses a spacing over the steps): the last multiple within them
    expect(committedSpacing(10, 10, 4)).toBe(8)
    // at least 2m: a committed leaf between checkpoints for a forced error
    expect(committedSpacing(1, 10, 4)).toBe(8)
    expect(committedSpacing(1, 7, 4)).toBe(4)
  })

  it('a task that names no spacing commits a root every 8 steps, unless it is shorter or its checkpoint spacing forbids it', () => {
    expect(DEFAULT_ROOT_EVERY).toBe(8)
    expect(defaultRootEvery(1000)).toBe(8)
    expect(defaultRootEvery(8)).toBe(8)
    expect(defaultRootEvery(1000, 16)).toBe(8)
    // every checkpoint must be a committed state: 5 is not a multiple of 8, so a root after every step
    expect(defaultRootEvery(1000, 5)).toBe(1)
    expect(defaultRootEvery(1000, 12)).toBe(1)
    // a checkpoint spacing is a multiple of m and at most the steps: a 7-step task cannot have m = 8
    expect(defaultRootEvery(7)).toBe(1)
    // the spacing task new then derives is a multiple of the default m within the steps
    expect(committedSpacing(5, 1000, defaultRootEvery(1000))).toBe(16)
    expect(committedSpacing(1, 10, defaultRootEvery(10))).toBe(8)
  })

  it('leaves are the steps min(j·m, N); segments hold at most m transitions', () => {
    expect(committedSteps(10, 4)).toEqual([0, 4, 8, 10])
    expect(committedSteps(8, 4)).toEqual([0, 4, 8])
    expect(committedSteps(5, 1)).toEqual([0, 1, 2, 3, 4, 5])
    expect(leafCount(10, 4)).toBe(4)
    expect([0, 1, 2].map(j => segmentLength(j, 10, 4))).toEqual([4, 4, 2])
    expect(segmentOfStep(9, 10, 4)).toEqual({ j: 2, i: 1 })
    expect(segmentOfStep(4, 10, 4)).toEqual({ j: 1, i: 0 })
    expect(leafOfStep(10, 10, 4)).toBe(3)
    expect(isCommittedStep(6, 10, 4)).toBe(false)
    expect(() => leafOfStep(6, 10, 4)).toThrow(/not committed/)
    expect(() => committedStep(4, 10, 4)).toThrow(/outside/)
    expect(() => segmentLength(3, 10, 4)).toThrow(/outside/)
    expect(() => leafCount(10, 65)).toThrow(/rootEvery/)
    // the depth comes from N and m alone: ⌈log2(⌈N / m⌉ + 1)⌉
    expect(proofDepth(10, 4)).toBe(2)
    expect(proofDepth(1000, 8)).toBe(7)
    expect(proofDepth(1000, 1)).toBe(10)
  })

  it('m = 1 proofs are unchanged: no rootEvery field, the same root over every step', () => {
    const roots = [0, 1, 2, 3].map(rootOf)
    const p = buildProof('cd'.repeat(32), 'rt', roots, [])
    expect('rootEvery' in p).toBe(false)
    expect(p.proofRoot).toBe(toHex(merkleRoot(roots.map(fromHex))))
    expect(JSON.stringify(p)).not.toContain('rootEvery')
    expect(rootAtStep(p, 2)).toBe(roots[2])
  })

  it('an m > 1 proof commits the committed steps only, and paths are by leaf', () => {
    const steps = committedSteps(10, 4)
    const roots = steps.map(rootOf)
    const p = buildProof('cd'.repeat(32), 'rt', roots, [{ step: 0, manifestHash: 'ef'.repeat(32) }, { step: 8, manifestHash: 'ef'.repeat(32) }], { rootEvery: 4, steps: 10 })
    expect(p.steps).toBe(10)
    expect(p.rootEvery).toBe(4)
    expect(p.finalStateRoot).toBe(rootOf(10))
    expect(validateProof(JSON.parse(JSON.stringify(p)))).toEqual(p)
    expect(rootAtStep(p, 8)).toBe(rootOf(8))
    const path = proveStepRoot(p, 10)
    expect(path.length).toBe(proofDepth(10, 4))
    expect(verifyStepRoot(p.proofRoot, leafOfStep(10, 10, 4), rootOf(10), path)).toBe(true)
    expect(() => proveStepRoot(p, 9)).toThrow(/not committed/)
    expect(() => buildProof('cd'.repeat(32), 'rt', roots.slice(1), [], { rootEvery: 4, steps: 10 })).toThrow(/need 4 roots/)
  })

  it('validateProof refuses a proof whose leaves do not fit N and m, an explicit m = 1, or a checkpoint between leaves', () => {
    const roots = committedSteps(10, 4).map(rootOf)
    const p = buildProof('cd'.repeat(32), 'rt', roots, [], { rootEvery: 4, steps: 10 })
    expect(() => validateProof({ ...p, rootEvery: 2 })).toThrow(/6 roots/)
    expect(() => validateProof({ ...p, rootEvery: 1 })).toThrow(/absent for 1/)
    expect(() => validateProof({ ...p, steps: 13 })).toThrow(/roots/)
    expect(() => validateProof({ ...p, checkpoints: [{ step: 6, manifestHash: 'ef'.repeat(32) }] })).toThrow(/checkpoints/)
    const { rootEvery: _m, ...asPerStep } = p
    expect(() => validateProof(asPerStep)).toThrow(/steps \+ 1 roots/)
  })

  it('a forced error of an m > 1 task marks a committed leaf that is not a checkpoint (a segment\'s last transition, never the last step)', () => {
    const seen = new Set<number>()
    for (let k = 0; k < 300; k++) {
      const out = sha256(Uint8Array.of(k, k >> 8))
      const f = forcedErrorFromOutput(out, 20, 1_000_000, 4, 8)!
      expect(isCommittedStep(f + 1, 20, 4)).toBe(true)
      seen.add(f)
    }
    // committed states 4, 8, 12, 16 below 20, less the checkpoints 8 and 16
    expect([...seen].sort((a, b) => a - b)).toEqual([3, 11])
    // at m = 1: every state below the last but the checkpoints
    const one = new Set<number>()
    for (let k = 0; k < 300; k++) one.add(forcedErrorFromOutput(sha256(Uint8Array.of(k, 1)), 10, 1_000_000, 1, 5)! + 1)
    expect([...one].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 6, 7, 8, 9])
  })
})
