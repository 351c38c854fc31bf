import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fromHex } from '../../protocols/commit/merkle.js'
import { buildServeParts, checkServePart, committedCheckpointTensors } from '../../protocols/availability/index.js'
import { rootAtStep, rootEveryOfProof, validateProof } from '../../protocols/pol/proof.js'
import type { TaskInfo } from '../../protocols/pallet-types.js'
import type { ChainClient, ChainEvent } from '../chain/client.js'
import type { Logger } from '../log.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { fastTensorRootUnder } from '../train/fast-commit.js'
import { checkpointDir, readJson } from '../train/store.js'
import { checkpointDataFile } from '../../protocols/pol/checkpoint.js'
import { ChallengeResponder, errName, sleep } from './challenge-responder.js'

// The solver's side of a data-availability challenge: when the chain reports
// a challenge against this node, it reads the challenged checkpoint from its
// own run directory (dataDir/tasks/<task>/run), checks it is the committed
// state, and serves it on chain before the deadline: every leaf of the state
// in parts of at most 1 MiB (protocols/availability/serve.ts; 2 parts,
// 1.4 MB, for the devnet's MLP), resuming after the parts already in. A node
// whose local checkpoint does not match its proof cannot answer, says so in
// its log, and will be slashed at the deadline.

export interface AvailabilityResponderInit {
  dataDir: string
  chain: () => Promise<ChainClient>
  log: Logger
}

export interface AnsweredChallenge { challengeId: number, taskId: number, step: number, answered: boolean, bytes?: number, ms: number, reason?: string }

/** The serve parts of checkpoint `step` from leaf `from` on, from the local run directory; throws with the reason when they cannot be built. */
export function serveFromRun (runDir: string, step: number, committedProofRoot: string, from = 0): Uint8Array[] {
  if (!existsSync(join(runDir, 'proof.json'))) throw new Error(`no run in ${runDir}`)
  const proof = validateProof(readJson(join(runDir, 'proof.json'), 'proof'))
  const root = committedProofRoot.replace(/^0x/, '')
  if (proof.proofRoot !== root) throw new Error('the local proof is not the committed one')
  if (step > proof.steps) throw new Error(`step ${step} is beyond the run's ${proof.steps} steps`)
  // with a root every m steps the checkpoint's state is leaf step / m of the proof
  const m = rootEveryOfProof(proof)
  const dir = checkpointDir(runDir, step)
  const manifest = readJson(join(dir, 'manifest.json'), `checkpoint manifest of step ${step}`) as { dataFile?: string, stateCommitment?: unknown }
  // a chunked program's checkpoint (its manifest says so, as this node's trainer wrote it) is served in
  // chunks under chunked headers; the chain takes the scheme from the task, so a wrong one cannot answer
  const scheme: CommitScheme = manifest.stateCommitment === 'chunked' ? 'chunked' : 'rowcol'
  const file = join(dir, checkpointDataFile(manifest))
  if (!existsSync(file)) throw new Error(`checkpoint data missing: ${file}`)
  const tensors = committedCheckpointTensors(
    manifest, new Uint8Array(readFileSync(file)), step, rootAtStep(proof, step), undefined, { stateCommitment: scheme, tensorRoot: fastTensorRootUnder(scheme) }
  )
  const seg = m === 1 ? undefined : { rootEvery: m, steps: proof.steps }
  const parts = buildServeParts(tensors, step, proof.stateRoots.map(fromHex), seg, { from, stateCommitment: scheme })
  // dry run of the chain's rule on the first part: never send what the chain would refuse
  if (parts.length > 0 && from === 0) {
    checkServePart({ proofRoot: fromHex(root), step, stepCount: proof.steps, rootEvery: m, served: 0, stateCommitment: scheme }, parts[0])
  }
  return parts
}

export class AvailabilityResponder extends ChallengeResponder<AnsweredChallenge> {
  constructor (private readonly o: AvailabilityResponderInit) { super(o.chain, o.log, 'availability challenge') }

  /** Feed every chain event here; challenges against `me` are answered in the background. */
  onChainEvent (e: ChainEvent, me: string): void {
    if (e.section !== 'arbitration' || e.method !== 'AvailabilityChallenged' || e.data.solver !== me) return
    this.start(Number(e.data.challengeId))
  }

  protected answers (task: TaskInfo, me: string): boolean { return task.solver === me }
  protected async openChallenges (chain: ChainClient, taskId: bigint): Promise<number[]> { return (await chain.openAvailability(taskId)).map(([, id]) => id) }

  async answer (id: number): Promise<void> {
    const t0 = Date.now()
    const chain = await this.o.chain()
    const c = await chain.availabilityChallenge(id)
    if (c == null || c.status !== 'Open' || c.solver !== chain.accountId) return
    const taskId = Number(c.taskId)
    const task = await chain.task(taskId)
    if (task == null) return
    const done = (answered: boolean, extra: Partial<AnsweredChallenge>): void =>
      this.record({ challengeId: id, taskId, step: c.checkpointStep, answered, ms: Date.now() - t0, ...extra })
    // resume after the parts already on chain (a restart, a retry)
    const from = (await chain.availabilityServe(id))?.served ?? 0
    let parts: Uint8Array[]
    try {
      parts = serveFromRun(join(this.o.dataDir, 'tasks', String(taskId), 'run'), c.checkpointStep, task.proofRoot, from)
    } catch (err) {
      this.o.log.error({ taskId, challengeId: id, step: c.checkpointStep, reason: (err as Error).message }, 'cannot answer the data-availability challenge: no valid local checkpoint (this node will be slashed at the deadline)')
      done(false, { reason: (err as Error).message })
      return
    }
    const bytes = parts.reduce((a, p) => a + p.length, 0)
    this.o.log.info({ taskId, challengeId: id, step: c.checkpointStep, parts: parts.length, bytes, deadline: c.deadline, ms: Date.now() - t0 }, 'serve parts built')
    // each part must land in order and by the deadline
    for (let i = 0, failures = 0; i < parts.length && failures < 20;) {
      try {
        await chain.respondAvailability(id, parts[i])
        i++
        failures = 0
      } catch (err) {
        failures++
        const name = errName(err)
        if (name === 'arbitration.AvailabilityClosed') return
        if (name === 'arbitration.InvalidAvailabilityResponse' && i > 0) {
          // a part sent again after a lost acknowledgement: resume from what the chain holds
          const served = (await chain.availabilityServe(id))?.served ?? 0
          parts = serveFromRun(join(this.o.dataDir, 'tasks', String(taskId), 'run'), c.checkpointStep, task.proofRoot, served)
          i = 0
          continue
        }
        if (name === 'arbitration.ResponseTooLate') { done(false, { reason: 'too late' }); throw err }
        if (name !== '') { done(false, { reason: name }); throw err }
        await sleep(500) // transport trouble: retry
      }
    }
    this.o.log.info({ taskId, challengeId: id, step: c.checkpointStep, parts: parts.length, bytes, ms: Date.now() - t0 }, 'served the challenged checkpoint on chain')
    done(true, { bytes })
  }
}
