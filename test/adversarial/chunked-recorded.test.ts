import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { chunkedStateRoot } from '../../protocols/commit/chunked.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { sizeOf } from '../../protocols/commit/tensor.js'
import { encodeEntryBytes } from '../../protocols/dispute/index.js'
import { newProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { honest, honestRun, nodeOf, playOnChain, type Run } from '../unit/dispute/fixture.js'
import { chunkedRun, readOf, tamperChunked, writeOf } from '../unit/dispute/chunked-fixture.js'
import { dispute } from './setup.js'

// The game over the tape the recorder takes of a chunked program's step
// (node/train/tape-recorder.ts under stateCommitment 'chunked'), SGD and Adam
// (whose accBeta state tensors are scalars: one chunk, one row): a cheater
// reading or writing one wrong state element is slashed on a convert claim, an
// honest defender keeps its stake. The chain takes the program's row + column
// twin (a chunked program is not admissible until every step is wired; the game
// and its claims never read the field).

const runs: Record<string, { plain: Run, rec: Run }> = {}
beforeAll(async () => {
  await cryptoWaitReady()
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  for (const optimizer of ['sgd', 'adam'] as const) {
    const base = { model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer, batchSize: 4, seed: 11, checkpointEvery: 5 }
    const plain = await honestRun(newProgram(base), ds, 2)
    const r = await honestRun(newProgram({ ...base, stateCommitment: 'chunked' }), ds, 2)
    // the trainer's own roots are row + column until it commits chunked ones: the disputed step's pre-state is the recorder's
    const roots = r.roots.slice()
    roots[r.step] = toHex(chunkedStateRoot(r.before, r.step))
    runs[optimizer] = { plain, rec: { ...r, roots, program: plain.program, programBytes: plain.programBytes, chunked: true } }
  }
}, 180_000)

for (const optimizer of ['sgd', 'adam'] as const) {
  describe(`the recorded tape of a chunked MLP ${optimizer} step`, () => {
    it('is the row + column tape with its conversions, as the game\'s fixture lays it out', () => {
      const { plain, rec } = runs[optimizer]
      const laid = chunkedRun(plain)
      expect(rec.entries.length).toBe(plain.entries.length + plain.before.length + plain.before.length)
      expect(rec.entries.map(e => toHex(encodeEntryBytes(e)))).toEqual(laid.entries.map(e => toHex(encodeEntryBytes(e))))
      expect(rec.roots[rec.step + 1]).toBe(laid.roots[rec.step + 1])
    })

    it('a wrong state read or post-state write is slashed on a convert claim; an honest defender keeps its stake', async () => {
      const { rec } = runs[optimizer]
      const last = rec.before.length - 1
      for (const t of [0, last]) {
        const f = sizeOf(rec.before[t].shape) - 1
        for (const i of [readOf(rec, t), writeOf(rec, t)]) {
          const cheat = await playOnChain(rec, tamperChunked(rec, i, f), honest(rec))
          expect(cheat.outcome.claim?.kind, `${rec.entries[i].kernel} of tensor ${t}`).toBe('convert')
          expect(dispute(cheat.h).status).toBe('ChallengerWon')
          const fair = await playOnChain(rec, honest(rec), tamperChunked(rec, i, f))
          expect(fair.outcome.status, `${rec.entries[i].kernel} of tensor ${t}`).toBe('DefenderWon')
          expect(nodeOf(fair.h, 'Bob').stake).toBe(10_000n * 10n ** 12n)
        }
      }
    }, 120_000)
  })
}
