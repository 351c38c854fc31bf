import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { DisputeResult, VerifyResult } from '../../actors/ports.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import type { validateProof } from '../../protocols/pol/proof.js'
import { checkpointLoads, replaysFor, sampleSegments } from '../../protocols/verification/sample.js'
import { checkpointsToChallenge } from '../../protocols/verification/checkpoint-steps.js'
import { checkedUnitOf, requiredSample, requiredSampleCount, verdictSteps, verifierSampleCount } from '../../protocols/verification/verdict.js'
import { decodeCheckpointEntry, type RunIndex } from '../../protocols/verification/run-index.js'
import { runAvailabilityChallenge } from '../availability/challenger.js'
import { VerifierChunks } from '../erasure/verifier.js'
import { PortsPart, type PortsShared } from './ports-part.js'
import { VerifierChecks } from './verifier-checks.js'
import { VerifierDataset, type TaskDataset } from './verifier-dataset.js'
import { fetchEvery } from './fetch-every.js'
import { challengeableOf, waitForRandomness } from './verifier-sample.js'
import { uncommittedCheckpoints } from './checkpoint-audit.js'
import { runFromChain } from './verifier-chain-run.js'
import { FETCH_RESERVE_BLOCKS, blockSignal } from './block-signal.js'
import { checkpointMaxBytes } from '../../protocols/verification/fetch-limits.js'
import { fetchPublishedRun } from './published-run.js'
import { readReplay, verdictOf } from './replay-verdict.js'
import { checkpointDir } from '../train/store.js'
import { pskAddonMissing } from '../train/psk-available.js'

// The verifier's and whistleblower's ports: the published run fetched and
// checked against the chain, a random sample of its steps replayed bit for
// bit in the warm engine, the verdict put on chain. With state roots every
// m > 1 steps the sample is of segments, each named by its last step c_{j+1}
// (protocols/verification/sample.ts sampleSegments): the replay runs the
// segment from the checkpoint before c_j and compares the roots at c_j and
// c_{j+1}; a mismatch names the committed step whose root differs, which the
// dispute service maps to its segment.

/** checkpoints a verifier fetches at once */
const CHECKPOINT_FETCHES = 4

export class VerifierPorts extends PortsPart {
  private readonly checks: VerifierChecks
  /** the task's dataset, or the rows its submitter served on chain (and the dataset challenge that asks for them) */
  readonly data: VerifierDataset

  constructor (shared: PortsShared) {
    super(shared)
    this.checks = new VerifierChecks(shared)
    this.data = new VerifierDataset(shared)
  }

  async verify (taskId: number, sampleCount?: number): Promise<VerifyResult> {
    const chain = await this.chain()
    // an assigned verifier's downloads end a few blocks before its deadline, however slowly
    // they are served: what it has not got by then it challenges on chain in time; a
    // whistleblower's (no assignment) before the challenge window's end, its last block to challenge
    const mine = await chain.myAssignment(taskId)
    const last = mine != null ? mine.deadline : (await this.taskOrThrow(taskId)).challengeEnd
    const by = last > 0 ? blockSignal(chain, last - FETCH_RESERVE_BLOCKS) : undefined
    try {
      return await this.verifyBy(taskId, sampleCount, by?.signal)
    } finally { by?.stop() }
  }

  private async verifyBy (taskId: number, sampleCount: number | undefined, signal: AbortSignal | undefined): Promise<VerifyResult> {
    const chain = await this.chain()
    const task = await this.taskOrThrow(taskId)
    // randomness: the hash of a block produced after the commitment; an assigned verifier's
    // sample is seeded by its own draw's block (a replacement's is later than committed_at + 1)
    const mine = await chain.myAssignment(taskId)
    const seed = await waitForRandomness(chain, mine?.seedBlock ?? task.committedAt + 1)
    const runDir = join(this.dataDir, 'verify', String(taskId))
    mkdirSync(runDir, { recursive: true })
    const requiredCount = requiredSampleCount(task.verifierCount)
    // the dataset's rows served on chain for our dataset challenge: only our required sample's batches are there
    const servedRows = await this.data.servedRows(chain, taskId, task, runDir)
    // never fewer than the chain requires of an accepting verdict (a larger sample contains the required one)
    const count = servedRows ? requiredCount : sampleCount ?? verifierSampleCount(task.verifierCount, this.econ.stepsPerVerifier)
    // the chain's m (from the program it checked at submit_task): what the sample and the verdict are in
    const m = await chain.rootEvery(taskId)
    // as an assigned verifier it may challenge only the checkpoints its required sample needs (CheckpointNotNeeded);
    // a larger sample (--verify-steps) that cannot use one only its extra steps need falls back to the required sample
    const allowed = mine == null ? undefined : new Set(challengeableOf(task, seed, chain.accountId, m))
    const narrowed = async (steps: number[]): Promise<number[] | VerifyResult> => {
      const usable = checkpointsToChallenge(steps, allowed, count > requiredCount)
      if (usable !== 'required') return usable
      this.log.warn({ taskId, steps }, 'only extra sampled steps need the unusable checkpoints: verifying the required sample')
      return await this.verify(taskId, requiredCount)
    }
    let index: RunIndex | undefined
    let program: TaskProgram
    let proof: ReturnType<typeof validateProof>
    // checkpoints served on chain (answered availability challenges): step → challenge
    let served: Map<number, number>
    // checkpoints already written from their serves (a run rebuilt from the chain)
    let written = new Set<number>()
    // checkpoints have no DHT provider records (publishRun): they come from the solver; the run's
    // other files are asked of it first too (a provider record anyone may add cannot stall them)
    const solverPeer = await this.checks.solverPeerOf(chain, task.solver)
    try {
      ;({ index, program, proof } = await fetchPublishedRun(this.shards, taskId, task, m, runDir, signal, solverPeer))
      served = await chain.servedCheckpoints(taskId)
    } catch (err) {
      // what the solver published cannot be obtained or is not what it committed: the replay's inputs
      // are read from the chain instead, once every checkpoint this sample needs (and 0) is served
      // there; until then, a data-availability challenge of each one not yet served, at once
      index = undefined
      // as an assigned verifier only its required sample's checkpoints may be challenged (CheckpointNotNeeded)
      if (mine != null && count > requiredCount) {
        this.log.warn({ taskId }, 'the published run is unusable: verifying the required sample from the chain')
        return await this.verify(taskId, requiredCount)
      }
      const why = `run of task ${taskId} unusable: ${(err as Error).message}`
      const sampledNow = task.stepCount === 0 ? [] : sampleSegments(seed, chain.accountId, task.stepCount, m, count)
      const r = await runFromChain(chain, taskId, task, m, sampledNow, runDir, why)
      if ('unavailable' in r) {
        const { step, more } = r.unavailable
        this.log.warn({ taskId, step, more, reason: why }, 'cannot obtain the published run: challenging what a replay from the chain needs')
        this.progress.set(taskId, { taskId, phase: 'failed', detail: `run unavailable: challenging checkpoints ${[step, ...(more ?? [])].join(', ')}`, updatedAt: Date.now() })
        return { accept: false, checkedSteps: [], unavailable: r.unavailable }
      }
      this.log.info({ taskId, reason: why }, 'replaying from the chain: the program, the served checkpoints and the proof\'s roots')
      ;({ program, proof, served, written } = r)
    }
    const div = proof.divergence
    // the served states are under the program's state commitment
    const scheme = commitSchemeOf(program)
    // replays check transitions only: the first state must be the program's initialisation
    const zero = index?.checkpoints.find(c => c.step === 0)
    const init = await this.checks.checkInitialState(chain, taskId, program, proof.stateRoots, runDir, async dir => {
      const onChain = served.get(0)
      if (written.has(0)) return undefined
      const at = { proofRoot: task.proofRoot, step: 0, stepCount: task.stepCount, rootEvery: m, stateCommitment: scheme }
      if (onChain !== undefined) return await this.checks.readServed(chain, onChain, at, dir)
      return zero == null ? 'no checkpoint of step 0 published' : await this.checks.fetchCheckpoint(zero, dir, solverPeer, checkpointMaxBytes(program), signal)
    })
    if (init !== undefined) return init
    // the engine loads its backend and the dataset (checked against dataset_root) while the checkpoints download
    const dataReady = this.data.datasetFor(taskId, task, program, runDir, servedRows, signal).catch((err: Error): TaskDataset => {
      this.log.warn({ taskId, err: err.message }, 'engine warm-up failed')
      return {}
    })
    const sampled = proof.steps === 0 ? [] : sampleSegments(seed, chain.accountId, proof.steps, m, count)
    const intervals = replaysFor(sampled, proof.steps, program.checkpointEvery)
    this.log.info({ taskId, sampledSteps: sampled.length, replays: intervals.length }, 'verification sample drawn')
    // the engine would replay with psk1's JavaScript kernels: the same bits, but it may miss the deadline (the slot's silence penalty)
    const jsKernels = pskAddonMissing(program.runtime)
    if (jsKernels !== undefined) this.log.warn({ taskId, runtime: program.runtime, reason: jsKernels }, `no usable psk1 addon on this peer: replaying task ${taskId} with the JavaScript kernels (far slower; the check may miss its deadline): build it with npm run build:kernels`)
    // fetch every checkpoint the sample needs (fetchEvery), then replay all of them in one engine run
    // exactly the checkpoints the replay will load (node/train/replay-many.ts follows the same rule)
    // rebuilt from the chain: the proof lists the checkpoints written, and the replay loads those (withheldRunCheckpoints)
    const steps = (index?.checkpoints ?? proof.checkpoints).map(c => c.step)
    const loads = new Set(sampled.length === 0 ? [] : checkpointLoads(sampled, steps, m, proof.steps))
    // every verifier replays a diverged proof's last step, from the checkpoint of its last state
    if (div !== undefined) loads.add(proof.steps)
    // from the run index, or (withheld) the run's checkpoint steps, each served on chain
    const needed: Array<{ step: number, ck?: RunIndex['checkpoints'][number] }> = steps.filter(s => loads.has(s)).map(step => ({ step, ck: index?.checkpoints.find(c => c.step === step) }))
    // checkpoints have no DHT provider records (publishRun): they come from the solver
    // erasure-coded checkpoints: the run index's codings must be what the solver committed;
    // a needed checkpoint that cannot be fetched whole is rebuilt from any k of its chunks
    const chunks = new VerifierChunks({ shards: this.shards, chain: async () => await this.chain(), log: this.log })
    const coded = index !== undefined && chunks.checkIndex(taskId, index, task.checkpoints.map(decodeCheckpointEntry))
    let fetched = 0
    const stateBytes = checkpointMaxBytes(program)
    const tFetch = performance.now()
    const problems = await fetchEvery(needed, CHECKPOINT_FETCHES, async ({ step, ck }) => {
      if (written.has(step)) return undefined
      const dir = checkpointDir(runDir, step)
      mkdirSync(dir, { recursive: true })
      // a checkpoint served on chain (an answered availability challenge) is read from there;
      // one nobody serves makes the interval unreplayable: a data-availability challenge
      const onChain = served.get(step)
      const at = { proofRoot: task.proofRoot, step, stepCount: task.stepCount, rootEvery: m, stateCommitment: scheme }
      const problem = onChain !== undefined
        ? await this.checks.readServed(chain, onChain, at, dir)
        : ck !== undefined ? await this.checks.fetchCheckpoint(ck, dir, solverPeer, stateBytes, signal) : 'not published'
      return problem != null && coded && ck !== undefined ? await chunks.rebuild(taskId, ck, join(dir, 'state.bin'), solverPeer, problem, signal) : problem
    }, ck => {
      fetched++
      this.progress.set(taskId, { taskId, phase: 'verifying', step: 0, steps: intervals.length, detail: `fetched checkpoint ${fetched}/${needed.length} (step ${ck.step})`, updatedAt: Date.now() })
    })
    this.log.info({ taskId, checkpoints: fetched, seconds: +((performance.now() - tFetch) / 1000).toFixed(2) }, 'checkpoints fetched')
    // a cheap availability sample of the coded chunks of one checkpoint (escalated to the chain in the background if a chunk cannot be fetched)
    const pick = needed[Math.floor(Math.random() * needed.length)]?.ck
    if (coded && pick !== undefined) await chunks.sample(taskId, pick, solverPeer, signal)
    const data = await dataReady
    // a dataset it cannot get: the submitter is challenged to serve its rows (with the checkpoints it cannot get, at once)
    const noData = 'unavailable' in data ? { datasetUnavailable: { reason: data.unavailable } } : {}
    if ('unavailable' in data) {
      // only an assigned verifier may have the rows served (challenge_dataset): its reject is backed by the challenge
      if (mine == null) throw new Error(`the task's dataset cannot be obtained: ${data.unavailable}`)
      this.log.warn({ taskId, reason: data.unavailable }, 'cannot obtain the task\'s dataset: rejecting and challenging the submitter to serve its rows')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: `dataset unavailable: ${data.unavailable}`, updatedAt: Date.now() })
      if (problems.length === 0) return { accept: false, checkedSteps: [], ...noData }
    }
    const datasetDir = 'unavailable' in data || data.served === true ? undefined : data.dir
    if (problems.length > 0) {
      const usable = await narrowed(problems.map(p => p.step))
      if (!Array.isArray(usable)) return usable
      const [step, ...more] = usable
      const reason = problems.find(p => p.step === step)?.reason ?? 'unavailable'
      this.log.warn({ taskId, step, reason, more }, 'cannot replay from the published checkpoint')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: `checkpoint ${[step, ...more].join(', ')} unavailable: ${reason}`, updatedAt: Date.now() })
      return { accept: false, checkedSteps: [], unavailable: { step, reason, ...(more.length > 0 ? { more } : {}) }, ...noData }
    }
    this.progress.set(taskId, { taskId, phase: 'verifying', step: 0, steps: intervals.length, detail: `replaying ${sampled.length} sampled step(s) from ${needed.length} checkpoint(s)`, updatedAt: Date.now() })
    const tReplay = performance.now()
    // every sampled step is replayed from its checkpoint and its transition (roots
    // before and after it) compared: those are the steps this verdict vouches for.
    // The engine checks each checkpoint as it loads it; one that is not the
    // committed state (or is corrupt) is, like a missing one, a data-availability problem.
    const out = sampled.length === 0 ? { results: [] } : await this.engine.replay(runDir, sampled, datasetDir, program.runtime, 'program')
    if (out.unavailable != null) {
      // the engine stops at the first bad checkpoint: the others (not read from the chain) are checked in full, to challenge them all at once
      const first = out.unavailable.step
      const others = uncommittedCheckpoints(program, runDir, proof, needed.map(c => c.step).filter(s => s !== first && !served.has(s)))
      const usable = await narrowed([first, ...others])
      if (!Array.isArray(usable)) return usable
      const [step, ...more] = usable
      const reason = step === first ? out.unavailable.reason : 'not the committed state'
      this.log.warn({ taskId, step, reason, more }, 'cannot replay from the published checkpoint')
      this.progress.set(taskId, { taskId, phase: 'failed', detail: `checkpoint ${[step, ...more].join(', ')} unusable: ${reason}`, updatedAt: Date.now() })
      return { accept: false, checkedSteps: [], unavailable: { step, reason, ...(more.length > 0 ? { more } : {}) } }
    }
    const { results } = out
    const read = readReplay(results)
    if (read.bad !== undefined) {
      this.log.warn({ taskId, step: read.bad, forcedSteps: read.forced }, read.nan === true ? 'a committed step holds a NaN' : 'replay disagrees with the committed proof')
      return verdictOf(read)
    }
    if (results.length !== sampled.length) throw new Error(`the replay stopped after ${results.length} of ${sampled.length} sampled steps`)
    if (div !== undefined) {
      const dc = await this.engine.checkDivergence(runDir, datasetDir, program.runtime, 'program')
      if (dc.unavailable != null) return { accept: false, checkedSteps: [], unavailable: dc.unavailable }
      const k1 = dc.check.step
      if (!dc.check.ok) {
        this.log.warn({ taskId, step: k1, reason: dc.check.reason }, 'the diverged step does not diverge as the proof says')
        return verdictOf({ ...read, bad: k1 })
      }
      this.log.info({ taskId, step: k1, reason: dc.check.reason }, 'the diverged step replays to its divergence point')
      read.checked.push(k1)
    }
    if (read.forced.length > 0) {
      // each disputed for its part of the jackpot; every other sampled step replayed
      this.log.info({ taskId, steps: read.forced }, 'our sample holds the solver\'s forced errors (marked leaves), and nothing else wrong')
      return verdictOf(read)
    }
    const checked = read.checked
    this.log.info({ taskId, sampledSteps: sampled.length, checkpoints: needed.length, seconds: +((performance.now() - tReplay) / 1000).toFixed(2) }, 'every sampled step replays bit for bit')
    this.progress.set(taskId, { taskId, phase: 'done', step: intervals.length, steps: intervals.length, detail: `accepted: ${checked.length} sampled steps replayed bit for bit`, updatedAt: Date.now() })
    return { accept: true, checkedSteps: checked }
  }

  /**
   * Data-availability challenges of the solver's checkpoint at `step` and of each in `more` (every
   * checkpoint the sample needs that it could not use), opened at once; resolves when the chain has ruled on all.
   * An assigned verifier needs a challenge of its own (it backs its reject): when another node already
   * challenged that checkpoint, it challenges another checkpoint of the run.
   */
  async challengeAvailability (taskId: number, step: number, more: number[] = []): Promise<DisputeResult> {
    const chain = await this.chain()
    let alternatives: number[] = []
    const mine = await chain.myAssignment(taskId)
    if (mine != null) {
      // only checkpoints its own required sample needs: the chain refuses the others (CheckpointNotNeeded)
      const t = await this.taskOrThrow(taskId)
      const seed = await waitForRandomness(chain, mine.seedBlock)
      alternatives = challengeableOf(t, seed, chain.accountId, await chain.rootEvery(taskId)).filter(s => s !== step && !more.includes(s))
    }
    const r = await runAvailabilityChallenge(chain, taskId, step, this.log, { alternatives, more })
    return { disputeId: r.challengeId, winner: r.winner, reason: `availability: ${r.reason}`, served: r.served }
  }

  async submitVerdict (taskId: number, v: VerifyResult): Promise<void> {
    const chain = await this.chain()
    // only the verifiers the chain drew give verdicts (a reject must then be backed by our own dispute or challenge)
    const mine = await chain.myAssignment(taskId)
    if (mine == null) throw new Error(`task ${taskId}: this peer is not an assigned verifier (or its assignment is over): a verdict would not count`)
    const best = await chain.bestNumber()
    if (best >= mine.deadline) this.log.warn({ taskId, best, deadline: mine.deadline }, 'the verdict is late for this assignment: the chain will refuse it')
    // an accepting verdict must list this verifier's own sample (the chain checks it):
    // it goes first, so a verifier that replayed more than the cap still lists it
    let required: number[] = []
    const task = await this.taskOrThrow(taskId)
    const m = await chain.rootEvery(taskId)
    if (v.accept) {
      // a proof that diverged at its first step has no completed step to sample
      required = task.stepCount === 0
        ? []
        : requiredSample(await waitForRandomness(chain, mine.seedBlock), chain.accountId, task.stepCount, task.verifierCount, m)
    }
    const listed = verdictSteps(required, v.checkedSteps)
    // on chain, unit i is the transition from state i to state i+1 (0-based), at m > 1 segment i; ours are 1-based steps (segment ends)
    await chain.submitVerdict(taskId, v.accept, listed.map(s => checkedUnitOf(s, task.stepCount, m)))
    await this.init.book.publish('verdicts', { taskId, verifier: this.peerId, accept: v.accept, checkedSteps: listed, firstBadStep: v.firstBadStep })
    this.log.info({ taskId, accept: v.accept, firstBadStep: v.firstBadStep }, 'verdict submitted')
  }
}
