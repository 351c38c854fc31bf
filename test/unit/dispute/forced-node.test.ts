import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromHex, merkleRoot, toHex } from '../../../protocols/commit/merkle.js'
import { checkForcedLeaf, forcedLeaf } from '../../../protocols/dispute/forced-leaf.js'
import { validateProof } from '../../../protocols/pol/proof.js'
import { newProgram } from '../../../protocols/program/index.js'
import { revealProofFromTape } from '../../../node/dispute/forced-reveal.js'
import { readTapeFile } from '../../../node/engine/tape-file.js'
import { tapeForDispute } from '../../../node/engine/tape-job.js'
import { initBackend } from '../../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../../node/train/dataset.js'
import { replaySteps } from '../../../node/train/replay-many.js'
import { trainTask } from '../../../node/train/run.js'
import { readCheckpoint } from '../../../node/train/store.js'
import { readReplay, verdictOf } from '../../../node/roles/replay-verdict.js'

// The node's forced error on the real training path: the training job marks
// the leaf after each forced step (forcedSteps, what the solver's draw passes)
// and changes no state, so its checkpoints and every later root are the
// honest run's, also after a resume; the reveal's proof the solver's node
// builds from its defender tape is the one the chain accepts; a verifier's
// replay reports the marked leaf and goes on.

const dirs: string[] = []
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'forced-node-')); dirs.push(d); return d }
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })
beforeAll(async () => { await initBackend('wasm') })

const ds = syntheticDataset(7, 64, 8)
const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 6, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 3 })
const roots = (dir: string): string[] => validateProof(JSON.parse(readFileSync(join(dir, 'proof.json'), 'utf8'))).stateRoots
const mark = (hex: string): string => toHex(forcedLeaf(fromHex(hex)))

describe('a forced error on the node (node/train/proof-recorder.ts, node/dispute/forced-reveal.ts)', () => {
  it('marks one leaf and nothing else; resumed, it marks it again; the proof from the defender tape is the chain\'s', async () => {
    const f = 3 // on-chain step: state 4 is committed marked (not a checkpoint: 3 and 6 are)
    const honestDir = tmp(); const forcedDir = tmp(); const resumedDir = tmp()
    await trainTask({ program, outDir: honestDir, dataset: ds, hashWorker: false, evaluate: false })
    await trainTask({ program, outDir: forcedDir, dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [f] })
    const [h, c] = [roots(honestDir), roots(forcedDir)]
    expect(c).toEqual(h.map((r, i) => i === f + 1 ? mark(r) : r))
    // checkpoints hold the honest states the committed leaves name
    for (const s of [3, 6]) expect(readCheckpoint(forcedDir, s).manifest.stateRoot).toBe(h[s])
    // a crash after checkpoint 3: the resumed run marks the same leaf
    await trainTask({ program, outDir: resumedDir, dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [f], until: 3 })
    await trainTask({ program, outDir: resumedDir, dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [f], resume: true })
    expect(roots(resumedDir)).toEqual(c)
    // a forced error never marks a checkpoint
    await expect(trainTask({ program, outDir: tmp(), dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [2] })).rejects.toThrow(/cannot mark checkpoint 3/)
    // the defender's tape of its forced step is honest; the proof is the path of the marked leaf
    const out = join(forcedDir, 'tape.cbor')
    await tapeForDispute({ runDir: forcedDir, step: f + 1, out, faults: { ops: [], weights: [] } })
    const tape = readTapeFile(out)
    expect(tape.stateRootAfter.replace(/^0x/, '')).toBe(h[f + 1].replace(/^0x/, ''))
    const ex = revealProofFromTape(tape, c)
    if (!('bytes' in ex)) throw new Error(ex.error)
    const env = { step: f, proofRoot: merkleRoot(c.map(fromHex)), stepCount: program.steps }
    expect(checkForcedLeaf({ ...env, honestPost: fromHex(h[f + 1]) }, ex.bytes)).toEqual({ ok: true })
    // an honest run has no forced error to prove
    expect(revealProofFromTape(tape, h)).toMatchObject({ error: expect.stringMatching(/not the forced mark/) })
  }, 120_000)

  it('a verifier whose sample holds the forced step reports it and checks the rest; one passing through it accepts', async () => {
    const f = 3
    const dir = tmp()
    await trainTask({ program, outDir: dir, dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [f] })
    const holds = await replaySteps({ proofDir: dir, steps: [2, f + 1, 5, 6] })
    const seen = holds.map(r => [r.step, r.forcedStep, r.firstMismatch])
    expect(seen).toEqual([[2, undefined, undefined], [4, 4, undefined], [5, undefined, undefined], [6, undefined, undefined]])
    expect(verdictOf(readReplay(holds))).toEqual({ accept: false, checkedSteps: [2, 4, 5, 6], firstBadStep: 4, forcedSteps: [4] })
    // steps 5 and 6 replayed from checkpoint 3, through the marked leaf
    const through = await replaySteps({ proofDir: dir, steps: [2, 5, 6] })
    expect(verdictOf(readReplay(through))).toEqual({ accept: true, checkedSteps: [2, 5, 6] })
  }, 120_000)

  it('several forced errors: every drawn leaf is marked, and a replay reports each in its sample and checks on', async () => {
    // on-chain steps 1 and 3: states 2 and 4 marked (3 and 6 are checkpoints)
    const honestDir = tmp(); const dir = tmp()
    await trainTask({ program, outDir: honestDir, dataset: ds, hashWorker: false, evaluate: false })
    await trainTask({ program, outDir: dir, dataset: ds, hashWorker: false, evaluate: false, forcedSteps: [1, 3] })
    const h = roots(honestDir)
    expect(roots(dir)).toEqual(h.map((r, i) => i === 2 || i === 4 ? mark(r) : r))
    const rs = await replaySteps({ proofDir: dir, steps: [2, 4, 5, 6] })
    expect(rs.map(r => r.forcedStep)).toEqual([2, 4, undefined, undefined])
    expect(verdictOf(readReplay(rs))).toEqual({ accept: false, checkedSteps: [2, 4, 5, 6], firstBadStep: 2, forcedSteps: [2, 4] })
  }, 120_000)
})
