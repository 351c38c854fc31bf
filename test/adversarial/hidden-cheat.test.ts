import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newProgram } from '../../protocols/program/index.js'
import { parseNodeFaults, trainFaults } from '../../node/dispute/faults.js'
import type { EngineFaults } from '../../node/engine/protocol.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { replaySteps, type ReplayResult } from '../../node/train/replay-many.js'
import { trainTask } from '../../node/train/run.js'
import { readReplay, verdictOf } from '../../node/roles/replay-verdict.js'

// A real cheat hidden behind the forced error. A solver whose private draw
// orders a forced error at on-chain step f also changes the state after a
// later step g before the next checkpoint c' (a backdoor in the weights) and
// trains on from it, its checkpoints consistent with the cheat. Before, the
// forced error was a state change the solver trained on from, so every
// verifier whose sample lay in (f + 1, c'] replayed from a checkpoint ≤ f,
// met the forced error first (a replay stops at the first mismatch), disputed
// f (excused: jackpot, its reject stands) and never checked g; verifiers past
// c' replay from the solver's own checkpoints. The cheat was paid whenever
// the draw landed. Now a forced error marks a leaf and the solver continues
// from the honest state: a replay passes the marked leaf and finds g. The
// run is the solver node's own training job (trainFaults: its draw and its
// tamper-weight fault). Each test fails if a verifier whose sample holds g
// does not dispute g.

const F = 1 // on-chain step: state 2 is the forced error's
const G = 3 // 1-based: the weights are changed after step 3; checkpoint 4 is the solver's, consistent with it
const dirs: string[] = []
let dir: string

/** What the engine's training job does with the solver's faults (node/engine/jobs.ts). */
const trainJob = (f: EngineFaults): Partial<Parameters<typeof trainTask>[0]> => ({
  faults: { ops: f.ops, weights: f.weights }, ...(f.forcedSteps !== undefined ? { forcedSteps: f.forcedSteps } : {})
})

beforeAll(async () => {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 8, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 4 })
  dir = mkdtempSync(join(tmpdir(), 'hidden-cheat-')); dirs.push(dir)
  await trainTask({ program, outDir: dir, dataset: ds, hashWorker: false, evaluate: false, ...trainJob(trainFaults(parseNodeFaults([`tamper-weight@${G}`]), [F])) })
}, 120_000)
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

/** The first step a replay of `steps` finds wrong that is not a forced error's marked leaf. */
const firstReal = (rs: ReplayResult[]): number | undefined => {
  const r = rs.find(x => x.firstMismatch !== undefined || (!x.match && x.forcedStep === undefined))
  return r === undefined ? undefined : r.firstMismatch ?? r.step
}

describe('a cheat after the forced error, before the next checkpoint, is caught', () => {
  it('a verifier whose sample is the cheat step replays through the marked leaf and disputes the cheat', async () => {
    const rs = await replaySteps({ proofDir: dir, steps: [G] })
    expect(firstReal(rs)).toBe(G)
    expect(verdictOf(readReplay(rs))).toEqual({ accept: false, checkedSteps: [G], firstBadStep: G })
  }, 60_000)

  it('a verifier whose sample holds both disputes the forced error (jackpot) and the cheat', async () => {
    const rs = await replaySteps({ proofDir: dir, steps: [F + 1, G, 7] })
    expect(rs.map(r => r.forcedStep)).toEqual([F + 1, undefined])
    expect(firstReal(rs)).toBe(G)
    expect(verdictOf(readReplay(rs))).toEqual({ accept: false, checkedSteps: [F + 1, G], firstBadStep: F + 1, forcedSteps: [F + 1], laterBadStep: G })
  }, 60_000)

  it('a whistleblower replaying every step goes on past the forced error and disputes the cheat too', async () => {
    const v = verdictOf(readReplay(await replaySteps({ proofDir: dir, steps: [1, 2, 3, 4, 5, 6, 7, 8] })))
    expect(v).toEqual({ accept: false, checkedSteps: [1, 2, 3], firstBadStep: F + 1, forcedSteps: [F + 1], laterBadStep: G })
  }, 60_000)
})
