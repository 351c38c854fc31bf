import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { corruptCheckpoints, serveFromRun } from '../../../node/availability/index.js'
import { parseNodeFaults, anyFault } from '../../../node/dispute/faults.js'
import { checkpointDir, writeCheckpoint } from '../../../node/train/store.js'
import { assembleServe, checkServePart, checkpointProblem } from '../../../protocols/availability/index.js'
import { fromHex, sha256, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { buildProof } from '../../../protocols/pol/proof.js'
import { tempDir } from '../../helpers/procs.js'

// The node side of a data-availability challenge on a real run directory:
// the solver builds its serve from its own checkpoint; a verifier's check
// of a fetched checkpoint; the bad-checkpoint fault leaves the solver unable
// to answer.

const PHASH = toHex(sha256(Uint8Array.of(1)))
const tensor = (shape: number[], seed: number): TensorData => ({ shape, dtype: 'float32', values: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.cos(seed + i)) })
const STATE = [tensor([10, 4], 1), tensor([4], 2), tensor([4, 3], 3), tensor([3], 4)]
let dir: { path: string, cleanup: () => Promise<void> }
let runDir: string
let proofRoot: string
let roots: string[]

beforeAll(async () => {
  dir = await tempDir('proofswarm-availability-')
  runDir = join(dir.path, 'run')
  const names = ['w1', 'b1', 'w2', 'b2']
  const { manifest } = writeCheckpoint(runDir, PHASH, 5, names, STATE)
  roots = Array.from({ length: 11 }, (_, s) => s === 5 ? manifest.stateRoot : toHex(sha256(Uint8Array.of(s))))
  const proof = buildProof(PHASH, 'tfjs-wasm', roots, [{ step: 5, manifestHash: toHex(sha256(Uint8Array.of(5))) }])
  proofRoot = '0x' + proof.proofRoot
  writeFileSync(join(runDir, 'proof.json'), JSON.stringify(proof))
})
afterAll(async () => { await dir?.cleanup() })

describe('data availability on the node', () => {
  it('the solver serves from its run directory; the serve passes the chain rule and rebuilds the state and the roots', () => {
    const parts = serveFromRun(runDir, 5, proofRoot)
    const ctx = { proofRoot: fromHex(proofRoot), step: 5, stepCount: 10 }
    const { served, total } = checkServePart({ ...ctx, served: 0 }, parts[0])
    expect(parts).toHaveLength(1)
    expect(served).toBe(total)
    const back = assembleServe(ctx, parts)
    expect(back.tensors.map(t => Array.from(t.values))).toEqual(STATE.map(t => Array.from(t.values)))
    expect(back.roots.map(toHex)).toEqual(roots)
    // resuming after leaf 1: the rest only, without the roots
    const rest = serveFromRun(runDir, 5, proofRoot, 1)
    expect(checkServePart({ ...ctx, served: 1 }, rest[0]).served).toBe(total)
    expect(() => serveFromRun(runDir, 5, '0x' + '00'.repeat(32))).toThrow(/not the committed one/)
    expect(() => serveFromRun(runDir, 10, proofRoot)).toThrow(/manifest of step 10 not found/)
  })

  it('a verifier accepts only the committed checkpoint of the step it fetched', () => {
    const d = checkpointDir(runDir, 5)
    const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'))
    const data = new Uint8Array(readFileSync(join(d, 'state.bin')))
    expect(checkpointProblem(manifest, data, 5, roots[5], PHASH)).toBeUndefined()
    expect(checkpointProblem(manifest, data, 0, roots[5])).toMatch(/of step 5, not 0/)
    expect(checkpointProblem(manifest, data, 5, roots[4])).toMatch(/not the committed root of step 5/)
    expect(checkpointProblem(manifest, data, 5, roots[5], toHex(sha256(Uint8Array.of(2))))).toMatch(/belongs to program/)
    expect(checkpointProblem({ version: 7 }, data, 5, roots[5])).toMatch(/not a version 1/)
  })

  it('--fault bad-checkpoint: one flipped byte per checkpoint, the solver cannot answer', () => {
    const f = parseNodeFaults(['bad-checkpoint'])
    expect(f.badCheckpoint).toBe(true)
    expect(anyFault(f)).toBe(true)
    const d = checkpointDir(runDir, 5)
    const before = new Uint8Array(readFileSync(join(d, 'state.bin')))
    expect(corruptCheckpoints(runDir, [5, 7])).toEqual([join(d, 'state.bin')])
    const after = new Uint8Array(readFileSync(join(d, 'state.bin')))
    expect(after.length).toBe(before.length)
    expect(after.filter((b, i) => b !== before[i]).length).toBe(1)
    const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'))
    expect(checkpointProblem(manifest, after, 5, roots[5])).toMatch(/hash mismatch/)
    expect(() => serveFromRun(runDir, 5, proofRoot)).toThrow(/hash mismatch/)
  })
})

describe('data availability on the node at a root every m steps', () => {
  it('the solver serves checkpoint 4 from its proof\'s leaf 4 / m; the serve passes the chain rule with m', async () => {
    const d2 = await tempDir('proofswarm-availability-m-')
    try {
      const run2 = join(d2.path, 'run')
      const { manifest } = writeCheckpoint(run2, PHASH, 4, ['w1', 'b1', 'w2', 'b2'], STATE)
      // 10 steps, a root every 2: leaves are the states after steps 0, 2, …, 10, so state 4 is leaf 2
      const leaves = [0, 2, 4, 6, 8, 10].map(s => s === 4 ? manifest.stateRoot : toHex(sha256(Uint8Array.of(s))))
      const proof = buildProof(PHASH, 'tfjs-wasm', leaves, [{ step: 4, manifestHash: toHex(sha256(Uint8Array.of(4))) }], { rootEvery: 2, steps: 10 })
      writeFileSync(join(run2, 'proof.json'), JSON.stringify(proof))
      const [bytes] = serveFromRun(run2, 4, '0x' + proof.proofRoot)
      const r = checkServePart({ proofRoot: fromHex(proof.proofRoot), step: 4, stepCount: 10, rootEvery: 2, served: 0 }, bytes)
      expect(r.part.statePath).toHaveLength(3)
      expect(() => checkServePart({ proofRoot: fromHex(proof.proofRoot), step: 4, stepCount: 10, served: 0 }, bytes)).toThrow(/AvailabilityProofInvalid/)
    } finally { await d2.cleanup() }
  })
})
