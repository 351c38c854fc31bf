import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot } from '../../../protocols/commit/merkle.js'
import { checkForcedExact } from '../../../protocols/dispute/forced-exact.js'
import { validateProof } from '../../../protocols/pol/proof.js'
import { newProgram } from '../../../protocols/program/index.js'
import { exactnessFromTape } from '../../../node/dispute/forced-exact.js'
import { readTapeFile } from '../../../node/engine/tape-file.js'
import { tapeForDispute } from '../../../node/engine/tape-job.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { trainTask } from '../../../node/train/run.js'

// The node's forced error on the real training path: the training child's
// weight fault (--fault-weight, what a forced error passes) commits exactly
// the forced state, and the exactness proof the solver's node builds from its
// defender tape (taped with the same fault) is the one the chain accepts.

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'forced-node-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
beforeAll(async () => { await initBackend('wasm') })

describe('a forced error on the node (node/train/fault.ts, node/dispute/forced-exact.ts)', () => {
  it('is one element after an honest step; the proof from the defender tape is exact', async () => {
    const ds = syntheticDataset(7, 64, 8)
    const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 2 })
    const f = 2 // on-chain step: engine step 3
    const honestDir = tmp(); const forcedDir = tmp()
    await trainTask({ program, outDir: honestDir, dataset: ds, hashWorker: false, evaluate: false })
    await trainTask({ program, outDir: forcedDir, dataset: ds, hashWorker: false, evaluate: false, faults: { ops: [], weights: [f + 1] } })
    const roots = (dir: string): string[] => validateProof(JSON.parse(readFileSync(join(dir, 'proof.json'), 'utf8'))).stateRoots
    const [h, c] = [roots(honestDir), roots(forcedDir)]
    expect(c.slice(0, f + 1)).toEqual(h.slice(0, f + 1))
    expect(c[f + 1]).not.toBe(h[f + 1])
    // the defender's tape of its forced step: honest ops and @state, the forced state committed
    const out = join(forcedDir, 'tape.cbor')
    await tapeForDispute({ runDir: forcedDir, step: f + 1, out, faults: { ops: [], weights: [f + 1] } })
    const tape = readTapeFile(out)
    expect(tape.stateRootAfter.replace(/^0x/, '')).toBe(h[f + 1].replace(/^0x/, ''))
    const ex = exactnessFromTape(tape, c)
    if (!('bytes' in ex)) throw new Error(ex.error)
    const env = { step: f, proofRoot: merkleRoot(c.map(fromHex)), stepCount: program.steps }
    expect(checkForcedExact({ ...env, honestPost: fromHex(h[f + 1]) }, ex.bytes)).toEqual({ ok: true })
    // an honest run has no forced error to prove
    expect(exactnessFromTape(tape, h)).toMatchObject({ error: expect.stringMatching(/not the honest one with the forced element/) })
  }, 120_000)
})
