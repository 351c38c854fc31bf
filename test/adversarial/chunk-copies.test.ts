import { beforeEach, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import type { ChunkRequest } from '../../devnet/chain/runtime/chunk-sampling.js'
import * as reference from '../../protocols/reference/index.js'
import { EVERY, STEPS, codedRun } from '../helpers/coded-run.js'
import { commitCall, saltOf } from '../helpers/challenge-commit.js'
import { harnessSample } from '../helpers/verdict-sample.js'
import { taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Front-run chunk-sample requests. One request per checkpoint may be open
// (ChunkRequestOpen), and a pending one sits in the pool: before, a watcher
// that had its copy included first shut the requester out of its own request
// and took the slash share when the solver withheld (S/4), the requester
// nothing. Now the requester commits to its request a block before it
// reveals it; a revealed request ranked before every open one of its
// checkpoint opens beside them, and the shares of the checkpoint's timeouts go
// largest first in the order of commitments. The test fails if the watcher
// takes more than the second share or the requester less than S/4.

const STAKE = 2000n * UNIT
const STEP = 5

let h: Harness
const task = (): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!
const request = (id: number): ChunkRequest => h.read<ChunkRequest>('Arbitration', 'ChunkRequests', id)!
const worth = (n: string): bigint => h.free(n) + h.reserved(n)

beforeEach(async () => {
  const run = codedRun()
  h = await Harness.create({ reference })
  const p = taskProgram({ steps: STEPS, checkpointEvery: EVERY })
  // Dave and Eve verify; Ferdie, a whistleblower, cannot fetch a chunk; Charlie watches the pool
  for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4], ['Ferdie', 8], ['Charlie', 8]] as const) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
  expect(h.run('Alice', 'Arbitration', 'submit_task', { programHash: p.programHash, program: p.programHex, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32), steps: STEPS, checkpointEvery: EVERY, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 40, solveTimeout: 20 }).error).toBeUndefined()
  h.advance(1)
  expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: run.proofRoot, finalStateRoot: run.finalStateRoot, stepCount: STEPS, checkpoints: run.entries }).error).toBeUndefined()
  h.advance(1)
  for (const v of ['Dave', 'Eve']) expect(h.run(v, 'Arbitration', 'submit_verdict', { taskId: 0, accept: true, checkedSteps: harnessSample(h, v) }).error).toBeUndefined()
})

const reveal = (who: string): [string, string, string, Record<string, unknown>] => [who, 'Arbitration', 'reveal_sample_chunks', { taskId: 0, checkpointStep: STEP, salt: saltOf(who, 'Chunks') }]

describe('a front-run chunk-sample request of a withholding solver', () => {
  for (const copy of ['included ahead of the reveal in its block, without a commitment', 'committed after the reveal was seen, the reveal held back a block'] as const) {
    it(`${copy}: the requester's request still opens and takes S/4, the watcher no more than the next share`, () => {
      const before = { Ferdie: worth('Ferdie'), Charlie: worth('Charlie') }
      expect(h.block([commitCall(h.accounts, 'Ferdie', 'Chunks', STEP)]).results[0].error).toBeUndefined()
      let results
      if (copy === 'included ahead of the reveal in its block, without a commitment') {
        results = h.block([['Charlie', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: STEP }], reveal('Ferdie')]).results
      } else {
        expect(h.block([commitCall(h.accounts, 'Charlie', 'Chunks', STEP)]).results[0].error).toBeUndefined()
        results = h.block([reveal('Charlie'), reveal('Ferdie')]).results
      }
      // before: Arbitration.ChunkRequestOpen for the requester
      results.forEach(r => expect(r.error).toBeUndefined())
      expect([request(0).requester, request(1).requester]).toEqual([h.accounts.Charlie, h.accounts.Ferdie])
      // the solver posts nothing; the watcher's request times out first
      h.advance(Math.max(request(0).deadline, request(1).deadline) - h.number)
      expect(h.run('Charlie', 'Arbitration', 'chunks_timeout', { requestId: 0 }).error).toBeUndefined()
      expect(worth('Charlie')).toBe(before.Charlie)
      expect(h.run('Ferdie', 'Arbitration', 'chunks_timeout', { requestId: 1 }).error).toBeUndefined()
      for (let i = 0; i < 200 && task().phase === 'Verifying'; i++) h.advance(1)
      expect(task().phase).toBe('Failed')
      // S/2 then half of the rest; deposits back; the larger share to the earlier commitment (before: S/4 to the watcher, 0 to the requester)
      expect(worth('Ferdie') - before.Ferdie).toBe(STAKE / 4n)
      expect(worth('Charlie') - before.Charlie).toBe(STAKE / 8n)
    })
  }

  it('an uncommitted request, or one committed after the open one\'s, still finds its checkpoint taken', () => {
    expect(h.block([commitCall(h.accounts, 'Ferdie', 'Chunks', STEP)]).results[0].error).toBeUndefined()
    expect(h.block([commitCall(h.accounts, 'Charlie', 'Chunks', STEP)]).results[0].error).toBeUndefined()
    expect(h.block([reveal('Ferdie')]).results[0].error).toBeUndefined()
    expect(h.block([reveal('Charlie')]).results[0].error).toBe('Arbitration.ChunkRequestOpen')
    expect(h.run('Dave', 'Arbitration', 'sample_chunks', { taskId: 0, checkpointStep: STEP }).error).toBe('Arbitration.ChunkRequestOpen')
  })
})
