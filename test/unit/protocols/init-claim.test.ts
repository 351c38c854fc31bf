import { describe, expect, it } from 'vitest'
import { ZERO_HASH, merkleProof, merkleRoot, sha256 } from '../../../protocols/commit/merkle.js'
import { stateRoot, stepLeaf } from '../../../protocols/commit/state.js'
import type { TensorData } from '../../../protocols/commit/tensor.js'
import { InitClaimRejected, buildInitClaim, decodeInitClaim, encodeInitClaim, firstInitMismatch, judgeInitClaim, type InitClaim, type InitEnv } from '../../../protocols/dispute/init-claim.js'
import { canonicalJson } from '../../../protocols/program/canonical-json.js'
import { initialState } from '../../../protocols/program/init.js'
import { newProgram, type TaskProgram } from '../../../protocols/program/index.js'

// The pure rule on initial-state claims: a claim about the honest initial
// state loses for the challenger, one about any other step-0 state loses for
// the solver, and a claim that proves nothing is refused.

const dataset = { kind: 'synthetic' as const, name: 'syn', sha256: 'ab'.repeat(32), trainSize: 64, testSize: 8, rowSize: 784, classes: 10, syntheticSeed: 3 }
const prog = (optimizer: 'sgd' | 'adam', seed = 5): TaskProgram => newProgram({ model: 'mlp', dataset, steps: 6, optimizer, batchSize: 8, seed })
const bytesOf = (p: TaskProgram): Uint8Array => new TextEncoder().encode(canonicalJson(p))

/** A committed proof whose state 0 is `state` (steps after it are arbitrary roots: the rule never reads them). */
function proof (state: TensorData[], step0 = 0): Uint8Array[] {
  return [stateRoot(state, step0), ...Array.from({ length: 6 }, (_, i) => sha256(Uint8Array.of(i)))]
}
const envOf = (p: TaskProgram, roots: Uint8Array[]): InitEnv => ({ programHash: sha256(bytesOf(p)), proofRoot: merkleRoot(roots), stepCount: roots.length - 1 })

function judge (e: InitEnv, c: InitClaim): string {
  try { return `${judgeInitClaim(e, decodeInitClaim(encodeInitClaim(c))).winner} wins` } catch (x) { if (x instanceof InitClaimRejected) return x.reason; throw x }
}
const copy = (s: TensorData[]): TensorData[] => s.map(t => ({ ...t, shape: [...t.shape], values: t.values.slice() }))

describe('judgeInitClaim', () => {
  for (const opt of ['sgd', 'adam'] as const) {
    it(`${opt}: claims about the honest initial state lose for the challenger (rows and columns, weights and slots)`, () => {
      const p = prog(opt); const s = initialState(p); const roots = proof(s)
      expect(firstInitMismatch(p, s)).toBeUndefined()
      for (const [t, flat] of [[0, 0], [0, 784 * 128 - 1], [1, 77], [2, 1279], [3, 9], [s.length - 1, 0]]) {
        expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: s, t, flat }))).toBe('solver wins')
      }
    })
  }

  it('one element changed: the claim on it convicts the solver; a claim elsewhere does not', () => {
    const p = prog('adam'); const s = copy(initialState(p))
    s[2].values[300] = Math.fround(s[2].values[300] * 1.0001)
    const roots = proof(s)
    expect(firstInitMismatch(p, s)).toEqual({ t: 2, flat: 300 })
    expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: s, t: 2, flat: 300 }))).toBe('challenger wins')
    expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: s, t: 2, flat: 301 }))).toBe('solver wins')
  })

  it('a wholly invented state (another seed), a non-zero Adam slot, a wrong step leaf: the solver loses', () => {
    const p = prog('adam')
    const invented = initialState(prog('adam', 6))
    const m = firstInitMismatch(p, invented)!
    let roots = proof(invented)
    expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: invented, ...m }))).toBe('challenger wins')
    const slot = copy(initialState(p)); slot[5].values[0] = 1e-3
    roots = proof(slot)
    expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: slot, ...firstInitMismatch(p, slot)! }))).toBe('challenger wins')
    // the honest tensors under a step-1 leaf
    const honest = initialState(p); roots = proof(honest, 1)
    const c = buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: honest, t: 0, flat: 0, last: stepLeaf(1) })
    expect(judge(envOf(p, roots), c)).toBe('challenger wins')
  })

  it('a tensor of another shape, a missing or an extra tensor: the solver loses without an element', () => {
    const p = prog('sgd'); const s = initialState(p)
    const transposed = copy(s); transposed[0].shape = [128, 784]
    let roots = proof(transposed)
    expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: transposed, t: 0, flat: 1 << 30 }))).toBe('challenger wins')
    for (const st of [s.slice(0, 3), [...s, s[3]]]) {
      roots = proof(st)
      expect(judge(envOf(p, roots), buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: st, t: 0, flat: 0 }))).toBe('challenger wins')
    }
  })

  it('claims that prove nothing are refused', () => {
    const p = prog('sgd'); const s = initialState(p); const roots = proof(s); const e = envOf(p, roots)
    const good = buildInitClaim({ program: bytesOf(p), stateRoots: roots, state: s, t: 1, flat: 3 })
    // another program, or the honest program under another hash
    expect(judge(e, { ...good, program: bytesOf(prog('sgd', 9)) })).toBe('InvalidProof')
    // state root 1 passed off as state root 0; a path one level short
    expect(judge(e, { ...good, root: roots[1], rootPath: merkleProof(roots, 1) })).toBe('InvalidProof')
    expect(judge(e, { ...good, rootPath: good.rootPath.slice(1) })).toBe('InvalidProof')
    // the honest root decomposed otherwise: a tensor dropped, the step leaf replaced
    expect(judge(e, { ...good, heads: good.heads.slice(0, 3) })).toBe('InvalidProof')
    expect(judge(e, { ...good, last: ZERO_HASH })).toBe('InvalidProof')
    // a slice that does not hold the element, or whose bytes were changed
    expect(judge(e, { ...good, flat: 4 })).toBe('InvalidClaim')
    const bytes = good.slice!.bytes.slice(); bytes[0] ^= 1
    expect(judge(e, { ...good, slice: { ...good.slice!, bytes } })).toBe('InvalidProof')
    expect(judge(e, { ...good, t: 9 })).toBe('InvalidClaim')
    const { slice: _s, ...noSlice } = good
    expect(judge(e, noSlice)).toBe('InvalidClaim')
    // sanity: the unmodified claim is judged
    expect(judge(e, good)).toBe('solver wins')
  })
})
