import { describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { NodeInfo, TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { JobScheduler } from '../../protocols/scheduling/jobs.js'
import * as reference from '../../protocols/reference/index.js'
import { minWindow, taskProgram } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { worth } from './setup.js'

// A solver that takes on more than it can do. The chain hands tasks to
// solvers by stake, whatever they are busy with; a peer with one slot that
// is drawn for three tasks at once can train one in time. Sitting on the
// other two (hoarding, as a solver without a scheduler did: it queued them
// and trained them one after another) gains it nothing: the chain pays only
// for a committed proof, and each missed deadline slashes a tenth of its
// stake, while the task waits the whole solve timeout for another solver.
// Handing them back at once (what the scheduler does) costs a release fee of
// a dispute bond, and the tasks move on at once. At the minimum stake a
// tenth of what is left after one slash (90) was less than that fee (100):
// hoarding paid 10 units better, so the timeout slash is now never below
// the release fee.
// The test fails if hoarding leaves the solver better off than handing back,
// or if the hoarded tasks are not delayed by it.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
const P = taskProgram({ steps: 100, checkpointEvery: 10 })
const SOLVE_TIMEOUT = 20
const BLOCK_MS = 1000
/** one slot, and a training takes 12 blocks: two back to back miss a 20-block deadline */
const TRAIN_MS = 12 * BLOCK_MS

interface World { h: Harness, selectedAt: Map<number, number> }

const task = (h: Harness, id: number): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', id)!
const solverOf = (h: Harness, id: number): string => Object.entries(h.accounts).find(([, v]) => v === task(h, id).solver)?.[0] ?? 'none'

/** Bob (the only solver when they arrive) is drawn for tasks 0, 1 and 2; Charlie registers just after. */
async function drawnThrice (stake: bigint): Promise<World> {
  const h = await Harness.create({ reference })
  const reg = (who: string, roles: number, s: bigint): void => { expect(h.run(who, 'Arbitration', 'register_node', h.registerArgs(who, roles, s)).error).toBeUndefined() }
  reg('Bob', 2, stake)
  // enough verifier stake to answer for the three tasks' penalties (3 × (B + R)): each is reserved at its solver's selection
  reg('Dave', 4, 3000n * UNIT)
  for (let i = 0; i < 3; i++) {
    const r = h.run('Alice', 'Arbitration', 'submit_task', {
      programHash: P.programHash, program: P.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10, escrow: 800n * UNIT,
      solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: minWindow(P, 1), solveTimeout: SOLVE_TIMEOUT
    })
    expect(r.error).toBeUndefined()
  }
  h.advance(1)
  for (let i = 0; i < 3; i++) expect(solverOf(h, i)).toBe('Bob')
  reg('Charlie', 2, 2000n * UNIT)
  return { h, selectedAt: new Map() }
}

/** What Bob's scheduler says of the three tasks, given their deadlines on chain. */
function admissions (w: World): string[] {
  const s = new JobScheduler({ maxJobs: 1, maxMemory: 2 ** 30 })
  return [0, 1, 2].map(id => s.admit({ id: `train-${id}`, taskId: id, kind: 'train', memory: 2 ** 27, estimateMs: TRAIN_MS, deadline: (task(w.h, id).deadline - w.h.number) * BLOCK_MS }, 0).decision)
}

/** Runs blocks until tasks 1 and 2 have a solver other than Bob; notes the blocks they were drawn in. */
function untilReassigned (w: World, maxBlocks: number): void {
  const moved = (id: number): boolean => task(w.h, id).solver !== null && solverOf(w.h, id) !== 'Bob'
  for (let b = 0; b < maxBlocks && ![1, 2].every(moved); b++) w.h.advance(1)
  // a selection sets the deadline solve_timeout blocks ahead
  for (const id of [1, 2]) if (moved(id)) w.selectedAt.set(id, task(w.h, id).deadline - SOLVE_TIMEOUT)
}

async function play (stake: bigint, bob: 'hoards' | 'hands back'): Promise<{ worth: bigint, stake: bigint, rent: bigint, reassignedAfter: number[] }> {
  const w = await drawnThrice(stake)
  // the blocks Bob was drawn in
  const drawn = [1, 2].map(id => task(w.h, id).deadline - SOLVE_TIMEOUT)
  // the scheduler runs task 0 and refuses the two it could not finish in time
  expect(admissions(w)).toEqual(['run', 'refuse', 'refuse'])
  if (bob === 'hands back') {
    for (const id of [1, 2]) expect(w.h.run('Bob', 'Arbitration', 'release_task', { taskId: id }).error).toBeUndefined()
  }
  // task 0 is trained and committed in time either way
  w.h.advance(TRAIN_MS / BLOCK_MS)
  expect(w.h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: H(9), finalStateRoot: H(8), stepCount: 100, checkpoints: ['0x01'] }).error).toBeUndefined()
  untilReassigned(w, 3 * SOLVE_TIMEOUT)
  for (const id of [1, 2]) expect(solverOf(w.h, id)).toBe('Charlie')
  return {
    worth: worth(w.h, 'Bob'),
    stake: w.h.read<NodeInfo>('Arbitration', 'Nodes', w.h.accounts.Bob)!.stake,
    rent: w.h.rentPaid('Bob'),
    reassignedAfter: [1, 2].map((id, i) => w.selectedAt.get(id)! - drawn[i])
  }
}

describe('a solver drawn for more tasks than it can train in time', () => {
  for (const stake of [1000n * UNIT, 2000n * UNIT, 10_000n * UNIT]) {
    it(`loses at least as much by hoarding them as by handing them back (stake ${stake / UNIT} units), and delays them`, async () => {
      const hoard = await play(stake, 'hoards')
      const handBack = await play(stake, 'hands back')
      expect(hoard.worth).toBeLessThanOrEqual(handBack.worth)
      // above the minimum stake, strictly: the scheduler's choice is the solver's own interest
      if (stake > 1000n * UNIT) expect(hoard.worth).toBeLessThan(handBack.worth)
      // each missed deadline slashes a tenth of what is left of the stake, at least a bond; each release costs a dispute bond (100 units)
      const slash = (s: bigint): bigint => s / 10n > 100n * UNIT ? s / 10n : 100n * UNIT
      // and the rent of the verifier stake each selection held (docs/economics.md, "Capacity griefing"): the same for
      // tasks 1 and 2 (drawn in one block, one deadline, one reward), paid at each unassignment after its slash
      const rent = hoard.rent / 2n
      expect(stake - hoard.stake).toBe(slash(stake) + rent + slash(stake - slash(stake) - rent) + rent)
      expect(stake - handBack.stake).toBe(2n * 100n * UNIT + handBack.rent)
      // handing back at once holds the reservation for less time than sitting on it: less rent
      expect(handBack.rent).toBeGreaterThan(0n)
      expect(handBack.rent).toBeLessThan(hoard.rent)
      // the submitter's tasks wait out the solve timeout behind a hoarder, and not behind a solver that hands them back
      for (const b of hoard.reassignedAfter) expect(b).toBeGreaterThan(SOLVE_TIMEOUT)
      // (the blocks of Charlie's registration and of the two releases)
      for (const b of handBack.reassignedAfter) expect(b).toBeLessThanOrEqual(3)
    }, 60_000)
  }
})
