import type { TaskInfo } from '../chain/client.js'
import { runEngineJob } from '../engine/engine.js'
import type { Logger } from '../log.js'

// The chain judges skeleton and data claims against the roots the submitter
// posted (skeleton_root, dataset_root), which it cannot check itself. A task
// whose roots are not those of its program and dataset is a trap: a solver
// that trains it honestly loses any dispute that ends in such a claim (the
// submitter's puppet challenger opens the bogus root where the honest tape
// differs), half its stake, while the submitter keeps the trained checkpoints
// and gets its escrow back. So a solver computes both roots (the submitter's
// own `commitments` job) before any training and hands a mismatching task
// back: the release fee instead of the slash.

/** The task's roots are not its program's and dataset's: hand it back, do not train it. */
export class BadCommitments extends Error {
  constructor (message: string) { super(message); this.name = 'BadCommitments' }
}

const same = (a: string, b: string): boolean => a.replace(/^0x/, '').toLowerCase() === b.replace(/^0x/, '').toLowerCase()

/** dataset roots by the program's dataset reference (its content hash or generator): committing a whole dataset takes seconds */
const datasetRoots = new Map<string, string>()

/**
 * Throws BadCommitments unless the program in `taskFile` and its dataset give
 * the chain's skeleton_root and dataset_root. `datasetKey`: what names the
 * dataset's content (the program's canonical dataset reference).
 */
export async function checkCommitments (
  taskId: number, task: Pick<TaskInfo, 'skeletonRoot' | 'datasetRoot'>, taskFile: string, datasetDir: string | undefined, datasetKey: string, log: Logger
): Promise<void> {
  const known = datasetRoots.get(datasetKey)
  const job = await runEngineJob({ kind: 'commitments', taskFile, datasetDir, skeletonOnly: known !== undefined }, log, 'task commitments').result
  const mine = { skeletonRoot: job.skeletonRoot, datasetRoot: known ?? job.datasetRoot }
  datasetRoots.set(datasetKey, mine.datasetRoot)
  const wrong = ([['skeleton_root', mine.skeletonRoot, task.skeletonRoot], ['dataset_root', mine.datasetRoot, task.datasetRoot]] as const)
    .filter(([, ours, chain]) => !same(ours, chain))
    .map(([name, ours, chain]) => `${name} on chain ${chain}, the program's and dataset's 0x${ours.replace(/^0x/, '')}`)
  if (wrong.length > 0) throw new BadCommitments(`task ${taskId} commits to roots that are not its program's and dataset's (${wrong.join('; ')}): not training it`)
}
