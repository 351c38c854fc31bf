import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { MAX_CLAIM_BYTES, encodeClaim } from '../../protocols/dispute/index.js'
import { MAX_SLICE_BYTES } from '../../protocols/dispute/messages.js'
import { ASCII_VOCAB } from '../../protocols/program/gpt.js'
import { admissibility, newProgram, validateProgram } from '../../protocols/program/index.js'
import { leafBytes, stepRoom } from '../../protocols/program/claim-room.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, textDataset } from '../../node/train/dataset.js'
import { TEST_TEXT, minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, honestRun, pair, tamperOp, verify, type Run } from '../unit/dispute/fixture.js'
import { playOff } from './setup.js'

// The GPT adds its position embedding on [B, T·D] (token embeddings and wpe
// reshaped so the broadcast Add's gradient is a column Sum: node/train/gpt.ts),
// then reshapes the sum back to [B·T, D]. One element of that Add reads a row
// of each operand, T·D values, and its claim carries the output's leaf too:
// at context 64 and width 128, 96 KiB, more than a claim holds; at width 256
// one row of the sum (64 KiB) is more than a slice answer may hold. The claim
// bound (claim-room.ts) modelled the GPT's dense layers, attention and
// reductions, not this sum, so such programs were admitted. Who gains: a
// solver that gets the position sum wrong (everything after it consistent)
// faces an honest claim the chain refuses for its size, the challenger loses
// at the deadline and the cheater is paid; at width 256 a griefer forcing a
// slice of the sum makes an honest solver's answer unpostable.

let run: Run
beforeAll(async () => {
  await cryptoWaitReady()
  await initBackend('wasm')
  const text = textDataset('fortunes-min', { vocab: ASCII_VOCAB, context: 64 })
  run = await honestRun(newProgram({ model: 'gpt', gpt: { layers: 1, dModel: 128, heads: 4, mlp: 16 }, dataset: datasetRef(text), steps: 2, optimizer: 'sgd', batchSize: 1, seed: 5, checkpointEvery: 2 }), text, 0)
}, 300_000)

describe('the GPT\'s position-embedding sum', () => {
  it('premise: the honest claim against a wrong position sum at width 128 does not fit a claim', async () => {
    const T = 64; const D = 128
    const i = run.entries.findIndex(e => e.kernel === 'Add' && e.outputs[0]?.shape.join(',') === `1,${T * D}`)
    expect(i).toBeGreaterThanOrEqual(0)
    // played off chain on a chain with no task: the signing context is all the players need
    const g = gamesFor(await Harness.create(), run, tamperOp(run, i), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step })
    const { claim, by } = playOff(g, pair('Bob').publicKey, pair('Dave').publicKey, verify)
    expect(by).toBe('challenger')
    expect(claim.kind).toBe('element')
    expect(encodeClaim(claim).length).toBeGreaterThan(MAX_CLAIM_BYTES)
    // at width 256 one row of the sum is more than a slice answer may hold
    expect(leafBytes([1, 64 * 256])).toBeGreaterThan(MAX_SLICE_BYTES)
  }, 120_000)

  it('admissibility sees the sum: such GPTs are refused, the default GPT is still admitted', async () => {
    for (const dModel of [128, 256]) {
      const p = validateProgram(taskProgram({ model: 'gpt', gpt: { layers: 1, dModel, heads: 4, mlp: 16 }, dataset: TEST_TEXT, batchSize: 1 }).program)
      expect(admissibility(p, reference.supportsElement).ok, `dModel ${dModel}`).toBe(false)
    }
    expect(stepRoom(validateProgram(run.program)).claim.bytes).toBeGreaterThan(MAX_CLAIM_BYTES)
    const h = await Harness.create({ reference })
    const p = taskProgram({ model: 'gpt', gpt: { layers: 1, dModel: 128, heads: 4, mlp: 16 }, dataset: TEST_TEXT, batchSize: 1 })
    expect(h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: p.programHash, program: p.programHex, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: 100, checkpointEvery: 10,
      escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout: 1000
    }).error).toBe('Arbitration.ProgramNotVerifiable')
    expect(admissibility(validateProgram(taskProgram({ model: 'gpt', dataset: TEST_TEXT, batchSize: 32 }).program), reference.supportsElement).reason).toBe('')
  })
})
