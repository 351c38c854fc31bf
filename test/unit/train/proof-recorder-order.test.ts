import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ProofRecorder } from '../../../node/train/proof-recorder.js'
import { readRoots } from '../../../node/train/store.js'
import type { StateHasher, SubmitResult } from '../../../node/train/state-hasher.js'
import type { Trainer } from '../../../node/train/trainer.js'

// The state hasher hands results back out of order when its worker falls
// behind: the training thread hashes the next states itself (state-hasher.ts),
// and those are done before the worker's earlier ones. A fast runtime on a
// loaded machine does this (psk1 at load ~30: the engine reported checkpoint 8
// before 0 and 4). A checkpoint must still be reported, and its roots written,
// only once every earlier one is: onCheckpoint says "on disk, with every root
// before it". The hasher here is a stub whose worker jobs finish when the test says.

const root = (s: number): Uint8Array => new Uint8Array(32).fill(s + 1)
let dir: string | undefined
afterEach(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('the proof recorder with a hasher whose results come out of order', () => {
  it('reports checkpoints and writes roots in step order', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-recorder-order-'))
    const late = new Map<number, () => void>()
    const hasher = {
      buffers: () => [],
      // steps 0..2 go to the "worker" (finished later, by the test), the rest are hashed "inline" (done at once)
      submit: async (job: { step: number }) => {
        const r: SubmitResult = { root: root(job.step), manifestHash: `m${job.step}` }
        if (job.step > 2) return { result: Promise.resolve(r) }
        return { result: new Promise<SubmitResult>(resolve => late.set(job.step, () => resolve(r))) }
      }
    } as unknown as StateHasher
    const trainer = { stateCopies: () => [] } as unknown as Trainer
    const reported: number[] = []
    const rec = new ProofRecorder(hasher, { outDir: dir, phash: 'p', names: [], stateSizes: [], checkpointEvery: 2, steps: 6, onCheckpoint: s => reported.push(s) })
    rec.startFresh()
    for (let s = 0; s <= 6; s++) await rec.submit(trainer, s)
    await new Promise(resolve => setTimeout(resolve, 10))
    // checkpoints 4 and 6 are hashed, 0 and 2 not yet: nothing may be reported
    expect(reported).toEqual([])
    for (const s of [2, 1, 0]) late.get(s)!()
    await rec.settleCheckpoints()
    expect(reported).toEqual([0, 2, 4, 6])
    expect(rec.checkpoints.map(c => c.step)).toEqual([0, 2, 4, 6])
    rec.close()
    expect(readRoots(dir)).toEqual([0, 1, 2, 3, 4, 5, 6].map(root))
  })
})
