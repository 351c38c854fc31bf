import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainClient, TaskInfo } from '../../node/chain/client.js'
import { createLogger } from '../../node/log.js'
import type { PortsShared } from '../../node/roles/ports-part.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { newProgram, programHash, validateProgram } from '../../protocols/program/index.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'

// A submitter posts a task whose program is real but whose skeleton_root (or
// dataset_root) is not the program's (the dataset's): the chain cannot check
// either at submit_task. Any dispute that ends in a skeleton (data) claim is
// judged against those roots, so its puppet challenger, holding the leaves
// behind the bogus root, wins one against the honest solver wherever the
// honest tape differs: half the solver's stake, the task failed, the escrow
// back, the trained checkpoints published. Before, the solver never compared
// the roots with its program and dataset and trained such a task. Now it
// computes both (the submitter's own `commitments` engine job) before training
// and hands the task back at once: the release fee, not the slash.

const log = createLogger('test', { level: 'silent' })
const program = newProgram({ model: 'mlp', dataset: datasetRef(syntheticDataset(7, 64, 8)), steps: 3, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 3 })
const ACCOUNT = '0x' + '44'.repeat(32)
let dataDir: string
let roots: { skeletonRoot: string, datasetRoot: string }
// the built node (dist/): the engine runs jobs in a child process of its own build
const DIST = join(process.cwd(), 'dist')
let runEngineJob: typeof import('../../node/engine/engine.js').runEngineJob
let PeerScheduler: typeof import('../../node/roles/job-scheduler.js').PeerScheduler
let defaultLimits: typeof import('../../node/roles/job-scheduler.js').defaultLimits
let SolverPorts: typeof import('../../node/roles/solver-ports.js').SolverPorts
let BadCommitments: typeof import('../../node/roles/task-commitments.js').BadCommitments

beforeAll(async () => {
  ;({ runEngineJob } = await import(join(DIST, 'node/engine/engine.js')) as typeof import('../../node/engine/engine.js'))
  ;({ PeerScheduler, defaultLimits } = await import(join(DIST, 'node/roles/job-scheduler.js')) as typeof import('../../node/roles/job-scheduler.js'))
  ;({ SolverPorts } = await import(join(DIST, 'node/roles/solver-ports.js')) as typeof import('../../node/roles/solver-ports.js'))
  ;({ BadCommitments } = await import(join(DIST, 'node/roles/task-commitments.js')) as typeof import('../../node/roles/task-commitments.js'))
  dataDir = mkdtempSync(join(tmpdir(), 'psw-commitments-'))
  const taskFile = join(dataDir, 'program.json')
  writeFileSync(taskFile, canonicalJson(program))
  const c = await runEngineJob({ kind: 'commitments', taskFile }, log, 'task commitments').result
  roots = { skeletonRoot: '0x' + c.skeletonRoot.replace(/^0x/, ''), datasetRoot: '0x' + c.datasetRoot.replace(/^0x/, '') }
}, 60_000)
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const flip = (h: string): string => h.slice(0, -1) + (h.endsWith('0') ? '1' : '0')

/** A chain whose task 0 is `program` with `task`'s roots, selected for us; releases are recorded. */
function chainWith (task: Pick<TaskInfo, 'skeletonRoot' | 'datasetRoot'>, released: number[]): ChainClient {
  const info = { ...task, programHash: '0x' + programHash(program), steps: program.steps, phase: 'Solving', solver: ACCOUNT, deadline: 1_000_000 }
  return {
    accountId: ACCOUNT,
    task: async () => info,
    releaseTask: async (id: number) => { released.push(id) },
    bestNumber: async () => 1,
    params: async () => ({ forcedErrorPpm: 0 })
  } as unknown as ChainClient
}

/** The solver's ports on that chain, wrapped by the peer's job scheduler as in a node. */
function solver (chain: ChainClient, dir: string): { ports: Pick<InstanceType<typeof SolverPorts>, 'train'>, progress: PortsShared['progress'] } {
  const bytes = new TextEncoder().encode(canonicalJson(program))
  const progress: PortsShared['progress'] = new Map()
  const shared = {
    init: {
      chain: async () => chain,
      shards: { fetchBytes: async () => bytes },
      book: { waitFor: async () => ({ task: { programCid: 'bafy-program' } }) }
    },
    peerId: 'peer',
    progress,
    econ: {},
    log,
    dataDir: dir,
    engine: {}
  } as unknown as PortsShared
  const solverPorts = new SolverPorts(shared)
  const ports = { train: solverPorts.train.bind(solverPorts), verify: async () => { throw new Error('not a verifier') } }
  const valid = validateProgram(JSON.parse(canonicalJson(program)))
  const sched = new PeerScheduler(defaultLimits(), { chain: async () => chain, program: async () => valid, log, registry: new Registry() })
  sched.wrap(ports as never)
  sched.stop()
  return { ports, progress }
}

describe('a task whose roots are not its program\'s and dataset\'s', () => {
  for (const which of ['skeletonRoot', 'datasetRoot'] as const) {
    it(`a bogus ${which}: the selected solver hands it back at once and never trains it`, async () => {
      const released: number[] = []
      const dir = mkdtempSync(join(dataDir, 'solver-'))
      const { ports, progress } = solver(chainWith({ ...roots, [which]: flip(roots[which]) }, released), dir)
      await expect(ports.train(0)).rejects.toThrow(BadCommitments)
      expect(released).toEqual([0])
      expect(progress.get(0)?.phase).not.toBe('training')
      const runDir = join(dir, 'tasks', '0', 'run')
      expect(existsSync(runDir) ? readdirSync(runDir) : []).toEqual([])
    }, 60_000)
  }

  it('the program\'s own roots pass the check: the solver goes on to train', async () => {
    const released: number[] = []
    const dir = mkdtempSync(join(dataDir, 'solver-'))
    const { ports, progress } = solver(chainWith(roots, released), dir)
    const abort = new AbortController()
    const run = ports.train(0, abort.signal)
    for (let i = 0; i < 300 && progress.get(0)?.phase !== 'training'; i++) await new Promise(resolve => setTimeout(resolve, 100))
    expect(progress.get(0)?.phase).toBe('training')
    abort.abort()
    await run.catch(() => {})
    expect(released).toEqual([])
  }, 60_000)
})
