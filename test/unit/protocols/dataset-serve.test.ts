import { describe, expect, it } from 'vitest'
import { decode, encode } from 'cborg'
import {
  DatasetServeRejected, DatasetServer, MAX_DATASET_PART_BYTES, checkDatasetServePart, datasetServeBytes, datasetServeSteps, servedBatches, type DatasetFacts
} from '../../../protocols/availability/dataset-serve.js'
import { batchIndices } from '../../../protocols/data/order.js'
import { challengeReplaySteps } from '../../../protocols/scheduling/estimate.js'
import { requiredSample } from '../../../protocols/verification/verdict.js'

// The serve of a withheld dataset's rows (docs/economics.md "A withheld
// dataset"): which steps' batches a verifier's required sample needs, and the
// parts the submitter posts, checked row by row against dataset_root.

describe('the steps whose batches a verifier\'s required sample replays', () => {
  it('for each unit, the steps from the latest checkpoint at or before its start to its end; a diverged proof\'s last step', () => {
    // 1-based units 3 and 8 (checkpoints every 5 of 12 steps): steps 0..2 from checkpoint 0, 5..7 from 5
    expect(datasetServeSteps([3, 8], 12, 5)).toEqual([0, 1, 2, 5, 6, 7])
    expect(datasetServeSteps([8], 12, 5, 1, true)).toEqual([5, 6, 7, 12])
    // segments of m = 2 named by their last step: segment ending at 10 starts at state 8, checkpoint 5
    expect(datasetServeSteps([10], 12, 5, 2)).toEqual([5, 6, 7, 8, 9])
  })

  it('covers every unit\'s replay and stays within what the challenge window prices, for many seeds and spacings', () => {
    const account = '0x' + '22'.repeat(32)
    for (const [steps, every, m] of [[1000, 10, 1], [1000, 10, 5], [1000, 100, 1], [203, 8, 4], [40, 1, 1]] as const) {
      for (let i = 0; i < 30; i++) {
        const required = requiredSample('0x' + i.toString(16).padStart(64, '0'), account, steps, 2, m)
        const got = datasetServeSteps(required, steps, every, m)
        expect(got.length).toBeLessThanOrEqual(challengeReplaySteps(steps, { checkpointEvery: every, rootEvery: m, verifierCount: 2 }))
        const set = new Set(got)
        for (const s of required) {
          const cp = every * Math.floor(m * Math.floor((s - 1) / m) / every)
          for (let t = cp; t < s; t++) expect(set.has(t)).toBe(true)
        }
      }
    }
  })
})

describe('a dataset serve', () => {
  const facts: DatasetFacts = { seed: 3, trainSize: 300, batchSize: 32, rowSize: 784, classes: 10 }
  const x = Float32Array.from({ length: 300 * 784 }, (_, i) => ((i * 2654435761) >>> 24) / 255)
  const y = new Float32Array(300 * 10)
  for (let r = 0; r < 300; r++) y[r * 10 + (r % 10)] = 1
  const server = new DatasetServer(facts, x, y)
  const steps = [0, 1, 2, 9, 10, 11, 30]
  const ctx = { datasetRoot: server.root, facts, steps }

  it('comes in parts of at most 1 MiB that the chain takes in order, and rebuilds every batch bit for bit', () => {
    const parts = server.parts(steps, { maxBytes: 200_000 })
    expect(parts.length).toBeGreaterThan(1)
    let served = 0
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(200_000)
      served = checkDatasetServePart({ ...ctx, served }, p).served
    }
    expect(served).toBe(steps.length * 32)
    const batches = servedBatches(ctx, parts)
    for (const s of steps) {
      const rows = batchIndices(facts.seed, 300, 32, s)
      const wantX = new Float32Array(32 * 784); const wantY = new Float32Array(32 * 10)
      rows.forEach((r, i) => { wantX.set(x.subarray(r * 784, (r + 1) * 784), i * 784); wantY.set(y.subarray(r * 10, (r + 1) * 10), i * 10) })
      expect(batches.get(s)!.x).toEqual(wantX)
      expect(batches.get(s)!.y).toEqual(wantY)
    }
    for (const p of server.parts(steps)) expect(p.length).toBeLessThanOrEqual(MAX_DATASET_PART_BYTES)
  })

  it('under another program\'s data order (withOrder, sharing the trees): the parts a server of that order builds', () => {
    const other: DatasetFacts = { ...facts, seed: 7, batchSize: 16 }
    const fresh = new DatasetServer(other, x, y)
    const shared = server.withOrder(7, 16)
    expect(shared.facts).toEqual(other)
    expect(shared.parts(steps, { maxBytes: 200_000 })).toEqual(fresh.parts(steps, { maxBytes: 200_000 }))
    expect(shared.parts(steps, { from: 40 })).toEqual(fresh.parts(steps, { from: 40 }))
    // the original's order is its own still
    expect(server.parts(steps)).not.toEqual(shared.parts(steps))
  })

  it('refuses a changed value, a part out of order, and an incomplete serve', () => {
    const [first, second] = server.parts(steps, { maxBytes: 200_000 })
    const reason = (f: () => unknown): string | undefined => { try { f(); return undefined } catch (e) { return (e as DatasetServeRejected).reason } }
    // one pixel of one row changed (a label leaf the same way): the leaf no longer verifies
    const p = decode(first) as { rows: Array<{ x: { bytes: Uint8Array }, y: { bytes: Uint8Array } }> }
    p.rows[3].x.bytes[5] ^= 1
    expect(reason(() => checkDatasetServePart({ ...ctx, served: 0 }, encode(p)))).toBe('DatasetProofInvalid')
    const q = decode(first) as typeof p
    q.rows[0].y.bytes[0] ^= 1
    expect(reason(() => checkDatasetServePart({ ...ctx, served: 0 }, encode(q)))).toBe('DatasetProofInvalid')
    expect(reason(() => checkDatasetServePart({ ...ctx, served: 0 }, second))).toBe('InvalidDatasetServe')
    expect(reason(() => checkDatasetServePart({ ...ctx, served: 0 }, new Uint8Array(MAX_DATASET_PART_BYTES + 1)))).toBe('ResponseTooLarge')
    expect(() => servedBatches(ctx, [first])).toThrow(/incomplete/)
  })

  it('takes a part starting before the next row: the rows it repeats are checked and count once, their bytes not again', () => {
    const whole = server.parts(steps)
    const head = decode(whole[0]) as { rows: Array<{ x: { bytes: Uint8Array }, y: { bytes: Uint8Array } }> }
    head.rows = head.rows.slice(0, 5)
    const first = encode(head)
    const headBytes = head.rows.reduce((a, r) => a + r.x.bytes.length + r.y.bytes.length, 0)
    expect(checkDatasetServePart({ ...ctx, served: 0 }, first)).toMatchObject({ served: 5, rowBytes: headBytes })
    // a row is at most its two leaves whole
    expect(headBytes).toBeLessThanOrEqual(datasetServeBytes(facts, 5))
    // the first part of the whole serve after those 5: every row checked, 5 not counted again
    const once = checkDatasetServePart({ ...ctx, served: 0 }, whole[0])
    const again = checkDatasetServePart({ ...ctx, served: 5 }, whole[0])
    expect(again.served).toBe(once.served)
    expect(again.rowBytes).toBe(once.rowBytes - headBytes)
    // a changed row among the repeated ones is still refused
    const bad = decode(whole[0]) as { rows: Array<{ x: { bytes: Uint8Array } }> }
    bad.rows[2].x.bytes[0] ^= 1
    expect(() => checkDatasetServePart({ ...ctx, served: 5 }, encode(bad))).toThrow(/DatasetProofInvalid/)
    // the verifier rebuilds the same batches from overlapping parts
    const batches = servedBatches(ctx, [first, ...whole])
    expect(batches.get(30)!.x).toEqual(servedBatches(ctx, whole).get(30)!.x)
    expect(batches.get(0)!.y).toEqual(servedBatches(ctx, whole).get(0)!.y)
  })
})
