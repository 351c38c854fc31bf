import { describe, expect, it } from 'vitest'
import { sha256, toHex } from '../../../protocols/commit/merkle.js'
import { proofRootOf, validateProof } from '../../../protocols/pol/proof.js'
import { proofFromChain, withheldRunCheckpoints } from '../../../protocols/verification/chain-run.js'

// What a verifier denied the run index or proof.json challenges, and the proof
// it rebuilds from the chain once those checkpoints are served.

const roots = (n: number): string[] => Array.from({ length: n }, (_, i) => toHex(sha256(Uint8Array.of(i))))

describe('a withheld run, from the chain', () => {
  it('challenges every checkpoint the replay loads (not only the first), 0 always, and a diverged proof\'s last state', () => {
    // 1-based steps; checkpoints 0, 5, 10, 12: step 3 loads 0, steps 7 and 8 load 5 once, step 12 loads 10
    expect(withheldRunCheckpoints([3, 7, 8, 12], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0, 5, 10])
    // consecutive units replay on from one checkpoint
    expect(withheldRunCheckpoints([5, 6, 7], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0])
    expect(withheldRunCheckpoints([9], { stepCount: 12, checkpointEvery: 5, diverged: false })).toEqual([0, 5])
    expect(withheldRunCheckpoints([9], { stepCount: 12, checkpointEvery: 5, diverged: true })).toEqual([0, 5, 12])
    expect(withheldRunCheckpoints([], { stepCount: 0, checkpointEvery: 5, diverged: true })).toEqual([0])
    // segments of m = 2 named by their last step: segment 4…6 replays from checkpoint 4
    expect(withheldRunCheckpoints([6], { stepCount: 12, checkpointEvery: 4, diverged: false }, 2)).toEqual([0, 4])
  })

  it('builds a proof that validates, of the served roots, listing the checkpoints it holds; refuses roots that are not the committed ones', () => {
    const r = roots(7)
    const at = { programHash: 'ab'.repeat(32), runtime: 'tfjs-wasm@4.22.0-simd', proofRoot: '0x' + proofRootOf(r), stepCount: 12, rootEvery: 2, roots: r }
    const p = proofFromChain({ ...at, checkpoints: [{ step: 4, manifestHash: 'cd'.repeat(32) }, { step: 0, manifestHash: 'ef'.repeat(32) }], divergence: null })
    expect(validateProof(JSON.parse(JSON.stringify(p)), 2)).toEqual(p)
    expect(p.checkpoints.map(c => c.step)).toEqual([0, 4])
    expect(p.finalStateRoot).toBe(r[6])
    expect(p.divergence).toBeUndefined()
    expect(proofFromChain({ ...at, checkpoints: [], divergence: { entry: 3, flat: 1 } }).divergence).toEqual({ entry: 3, flat: 1 })
    expect(() => proofFromChain({ ...at, roots: roots(8).slice(1), checkpoints: [] })).toThrow(/proof root/)
    expect(() => proofFromChain({ ...at, roots: r.slice(1), checkpoints: [] })).toThrow(/6, a proof of 12 steps/)
  })
})
