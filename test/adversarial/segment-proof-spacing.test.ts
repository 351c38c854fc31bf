import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromHex, toHex, merkleProof } from '../../protocols/commit/merkle.js'
import { buildProof, validateProof } from '../../protocols/pol/proof.js'
import { proofDepth } from '../../protocols/pol/segments.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { newProgram, programHash } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../node/train/dataset.js'
import { replaySteps } from '../../node/train/replay-many.js'
import { trainTask } from '../../node/train/run.js'

// A solver of a task with roots every m = 4 steps publishes a proof of
// another spacing (every step's root, say: honest-looking, complete, with a
// valid proof root of its own). The chain takes only proof_root and proves
// leaves at the depth it computes from step_count and m (proofDepth), so no
// leaf of that tree can be proven in a dispute of the task: a verifier that
// accepted it would vouch for a proof nobody can dispute. The proof must be
// refused against the program's m — by validateProof and by every replay.

let ds: Dataset
const dirs: string[] = []
const roots = (n: number): string[] => Array.from({ length: n }, (_, i) => toHex(new Uint8Array(32).fill(i + 1)))

beforeAll(async () => {
  await initBackend('wasm')
  ds = syntheticDataset(3, 256, 32)
})
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

describe('a proof whose spacing is not the program\'s is refused', () => {
  it('validateProof against the program\'s m refuses a per-step proof of an m = 4 task, and an m = 4 proof of an m = 1 task', () => {
    const perStep = buildProof('ab'.repeat(32), 'rt', roots(17), [])
    const segmented = buildProof('ab'.repeat(32), 'rt', roots(5), [], { rootEvery: 4, steps: 16 })
    expect(() => validateProof(perStep)).not.toThrow()
    expect(() => validateProof(perStep, 4)).toThrow(/proof.rootEvery is 1, the program's is 4/)
    expect(() => validateProof(segmented, 1)).toThrow(/proof.rootEvery is 4, the program's is 1/)
    expect(() => validateProof(segmented, 4)).not.toThrow()
    // why it matters: the per-step tree's leaves have paths of another length than the chain's depth for the task
    expect(merkleProof(perStep.stateRoots.map(fromHex), 4).length).not.toBe(proofDepth(16, 4))
  })

  it('a replay of a run whose proof.json has another spacing than its task.json fails with that reason', async () => {
    const p1 = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 8, optimizer: 'sgd', batchSize: 16, checkpointEvery: 4, seed: 5 })
    const dir = mkdtempSync(join(tmpdir(), 'ps-seg-spacing-')); dirs.push(dir)
    await trainTask({ program: p1, outDir: dir, dataset: ds, hashWorker: false, evaluate: false })
    // the same training, published under the m = 4 program (proof re-labelled to its hash so only the spacing differs)
    const p4 = { ...p1, rootEvery: 4 }
    writeFileSync(join(dir, 'task.json'), canonicalJson(p4))
    const proof = JSON.parse(readFileSync(join(dir, 'proof.json'), 'utf8'))
    writeFileSync(join(dir, 'proof.json'), JSON.stringify({ ...proof, programHash: programHash(p4) }))
    await expect(replaySteps({ proofDir: dir, steps: [4] })).rejects.toThrow(/proof.rootEvery is 1, the program's is 4/)
  })
})
