import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { corruptCheckpoints, responseFromRun } from '../../../node/availability/index.js'
import { parseNodeFaults, anyFault } from '../../../node/dispute/faults.js'
import { checkpointDir, writeCheckpoint } from '../../../node/train/store.js'
import { checkAvailabilityResponse, checkpointProblem, SAMPLE_COUNT } from '../../../protocols/availability/index.js'
import { fromHex, sha256, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { buildProof } from '../../../protocols/pol/proof.js'
import { tempDir } from '../../helpers/procs.js'

// The node side of a data-availability challenge on a real run directory:
// the solver builds its answer from its own checkpoint; a verifier's check
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
  it('the solver answers from its run directory; the answer passes the chain rule', () => {
    const seed = sha256(Uint8Array.of(9))
    const bytes = responseFromRun(runDir, 5, proofRoot, seed, SAMPLE_COUNT)
    const r = checkAvailabilityResponse({ proofRoot: fromHex(proofRoot), step: 5, stepCount: 10, seed }, bytes)
    expect(r.samples).toHaveLength(SAMPLE_COUNT)
    expect(() => responseFromRun(runDir, 5, '0x' + '00'.repeat(32), seed, SAMPLE_COUNT)).toThrow(/not the committed one/)
    expect(() => responseFromRun(runDir, 10, proofRoot, seed, SAMPLE_COUNT)).toThrow(/manifest of step 10 not found/)
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
    expect(() => responseFromRun(runDir, 5, proofRoot, sha256(Uint8Array.of(9)), SAMPLE_COUNT)).toThrow(/hash mismatch/)
  })
})

describe('data availability on the node at a root every m steps', () => {
  it('the solver answers a challenge of checkpoint 4 from its proof\'s leaf 4 / m; the answer passes the chain rule with m', async () => {
    const d2 = await tempDir('proofswarm-availability-m-')
    try {
      const run2 = join(d2.path, 'run')
      const { manifest } = writeCheckpoint(run2, PHASH, 4, ['w1', 'b1', 'w2', 'b2'], STATE)
      // 10 steps, a root every 2: leaves are the states after steps 0, 2, …, 10, so state 4 is leaf 2
      const leaves = [0, 2, 4, 6, 8, 10].map(s => s === 4 ? manifest.stateRoot : toHex(sha256(Uint8Array.of(s))))
      const proof = buildProof(PHASH, 'tfjs-wasm', leaves, [{ step: 4, manifestHash: toHex(sha256(Uint8Array.of(4))) }], { rootEvery: 2, steps: 10 })
      writeFileSync(join(run2, 'proof.json'), JSON.stringify(proof))
      const seed = sha256(Uint8Array.of(9))
      const bytes = responseFromRun(run2, 4, '0x' + proof.proofRoot, seed, SAMPLE_COUNT)
      const r = checkAvailabilityResponse({ proofRoot: fromHex(proof.proofRoot), step: 4, stepCount: 10, rootEvery: 2, seed }, bytes)
      expect(r.statePath).toHaveLength(3)
      expect(() => checkAvailabilityResponse({ proofRoot: fromHex(proof.proofRoot), step: 4, stepCount: 10, seed }, bytes)).toThrow(/AvailabilityProofInvalid/)
    } finally { await d2.cleanup() }
  })
})
