import { u8aToHex } from '@polkadot/util'
import { describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import { chunkRootEntry } from '../../protocols/erasure/commitment.js'
import { RUN_INDEX_PREFIX } from '../../protocols/verification/run-index.js'
import * as reference from '../../protocols/reference/index.js'
import { PROGRAM, PROOF_ROOT, ROOTS, STAKE } from '../helpers/availability-task.js'
import { Harness } from '../unit/chain/harness.js'

// Checkpoint entries bloating the task's record (docs/economics.md
// "Checkpoint entries"). commit_proof bounded the number of checkpoint
// entries (max_checkpoints, 4,096) but not their bytes, and they are stored in
// the task's record, which on_initialize reads and writes in every block while
// the task is open. A solver (of its own task, say) committing four 1 MiB
// entries, in an extrinsic under the 4 MiB limit, made every block of the
// challenge window take 205 ms of the runtime's time instead of 12 (runtime
// harness, load 18 on 2 cores): five such tasks fill a 1-second block, for as
// long as their windows run, for the price of a task's rent.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const hexOf = (s: string): string => u8aToHex(new TextEncoder().encode(s))

describe('checkpoint entries are bounded in bytes', () => {
  it('four 1 MiB entries are refused; what a node commits (its run index and coded root) is not', async () => {
    const h = await Harness.create({ reference })
    for (const [n, roles] of [['Bob', 2], ['Dave', 4], ['Eve', 4]] as const) {
      expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, roles, STAKE)).error).toBeUndefined()
    }
    expect(h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: PROGRAM.programHash, program: PROGRAM.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 10, checkpointEvery: 5,
      escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: 200, solveTimeout: 20
    }).error).toBeUndefined()
    h.advance(1)
    const commit = (checkpoints: string[]): string | undefined =>
      h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: PROOF_ROOT, finalStateRoot: u8aToHex(ROOTS[10]), stepCount: 10, checkpoints }).error
    const mib = '0x' + 'ab'.repeat(1024 * 1024)
    // before: accepted, and stored in the task's record for the whole window
    expect(commit([mib, mib, mib, mib])).toBe('Arbitration.TooManyCheckpoints')
    // many small entries adding up past the bound: the same
    expect(commit(Array.from({ length: 4096 }, () => '0x' + 'cd'.repeat(64)))).toBe('Arbitration.TooManyCheckpoints')
    const cid = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy'
    expect(commit([hexOf(RUN_INDEX_PREFIX + cid), hexOf(chunkRootEntry(new Uint8Array(32).fill(7)))])).toBeUndefined()
    expect(h.read<{ phase: string }>('Arbitration', 'Tasks', 0)!.phase).toBe('Verifying')
  }, 120_000)
})
