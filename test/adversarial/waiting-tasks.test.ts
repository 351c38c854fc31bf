import { describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import * as reference from '../../protocols/reference/index.js'
import { PROGRAM, STAKE } from '../helpers/availability-task.js'
import { Harness } from '../unit/chain/harness.js'

// Tasks waiting for verifier stake (docs/economics.md "Tasks waiting for
// verifier stake"). A task nobody can answer for (verifier_count above the
// verifiers there are, or a reward above their free stake) stays Unassigned
// for UnassignedTimeout blocks and retries its selection in every block; the
// retry asked which stake is bound, which reads every open task. N such tasks
// cost N² reads a block: 400 of them, submitted in one block for escrows that
// all come back at expiry, made every block of the next hour take 19.7 s of the
// runtime's time (0.2 s now; 5 ms with no task; runtime harness, load 20 on
// 2 cores). Counted here in reads of the state below the block, which do
// not depend on the machine: they must grow linearly with N.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const STUCK = {
  programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
  // 64 verifiers wanted, two registered: the task waits for stake that never comes
  escrow: 65n * UNIT, solverReward: UNIT, verifierReward: UNIT, verifierCount: 64, challengeWindow: 16, solveTimeout: 20
}

describe('tasks waiting for verifier stake cost each block in proportion to their number', () => {
  it('the reads of a block with 2N waiting tasks are at most about twice those with N', async () => {
    const h = await Harness.create({ reference })
    for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) {
      expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
    }
    // every read the block makes below its own layer
    let reads = 0
    const get = h.state.get.bind(h.state)
    h.state.get = (k: string) => { reads += 1; return get(k) }
    const blockReads = (): number => { reads = 0; h.advance(1); return reads }
    const submit = (n: number): void => {
      const r = h.block(Array.from({ length: n }, (): [string, string, string, Record<string, unknown>] => ['Alice', 'Arbitration', 'submit_task', STUCK]))
      expect(r.results.map(x => x.error).filter(e => e !== undefined)).toEqual([])
      h.advance(1)
    }
    const N = 40
    submit(N)
    const one = blockReads()
    submit(N)
    const two = blockReads()
    for (let id = 0; id < 2 * N; id++) expect(h.read<TaskInfo>('Arbitration', 'Tasks', id)!.phase).toBe('Unassigned')
    // linear: 2x (plus what does not depend on N); before: ~4x (N = 40: 4,664 reads, then 17,324; now 686, then 1,366)
    expect(two / one).toBeLessThan(2.5)
  }, 120_000)

  it('stake one task reserved in a block is bound for the next task selected in the same block (the bound stake is not remembered past a reservation)', async () => {
    const h = await Harness.create({ reference })
    // two verifiers whose stake answers for one such task each: 1,000 covers B + R = 600 once
    for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, 1000n * UNIT)).error).toBeUndefined()
    const task = { ...STUCK, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2 }
    const r = h.block([['Alice', 'Arbitration', 'submit_task', task], ['Alice', 'Arbitration', 'submit_task', task]])
    expect(r.results.map(x => x.error)).toEqual([undefined, undefined])
    h.advance(2)
    // no solver yet: both wait; then one registers, and both retry in the same block
    expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, STAKE)).error).toBeUndefined()
    h.advance(1)
    const phases = [0, 1].map(id => h.read<TaskInfo>('Arbitration', 'Tasks', id)!.phase)
    expect(phases).toEqual(['Solving', 'Unassigned'])
    expect(h.read<string[]>('Arbitration', 'VerifierReservations', 1)).toEqual([])
  }, 120_000)
})
