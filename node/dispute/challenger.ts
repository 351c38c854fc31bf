import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { KeyringPair } from '@polkadot/keyring/types'
import { hexToU8a } from '@polkadot/util'
import type { DisputeResult } from '../../actors/ports.js'
import { verifySigned } from '../../protocols/dispute/index.js'
import { samePreHex } from '../../protocols/dispute/forced-leaf.js'
import { rootAtStep, rootEveryOfProof } from '../../protocols/pol/proof.js'
import { committedStep, segmentOfStep } from '../../protocols/pol/segments.js'
import type { ChainClient, TaskInfo } from '../chain/client.js'
import type { TapeJob } from '../engine/protocol.js'
import type { TapeFile } from '../engine/tape-file.js'
import type { ShardService } from '../shards/index.js'
import { ChallengerPlay, type Incoming, type PlayHost, type PlayOut, type SegmentOpening } from './challenger-play.js'
import { contextOf, verify } from './dispute-context.js'
import { disputeOfStep } from './dispute-shape.js'
import { makeChallenger, nanFacts } from './players.js'
import { ensureReplayDir } from './replay-dir.js'
import { FETCH_RESERVE_BLOCKS, blockSignal } from '../roles/block-signal.js'
import { nanStepOf, segmentChallengerOf, segmentDisputeError, segmentEndAgrees, segmentPlanOf, type SegmentPlan } from './segment-challenge.js'
import { request } from './transport.js'

// The challenger's side of a dispute (docs/disputes.md, "Node side"): it
// tapes the disputed step (or, with a root every m > 1 steps, replays the
// segment) in a child process, opens the dispute on chain only when it can
// win, finds the defender's peer id on chain and plays the pure game over
// /proofswarm/dispute/3.0.0, forcing a move on chain when the defender is
// quiet and answering a move the defender forced on it (challenger-play.ts).

/** What the challenger uses of the dispute service. */
export interface ChallengerHost extends PlayHost {
  shards: ShardService
  chain: () => Promise<ChainClient>
  dataDir: string
  tapeInChild: (runDir: string, step: number, out: string, o: Pick<TapeJob, 'faults' | 'datasetProofs'>) => Promise<TapeFile>
  segmentRootsInChild: (runDir: string, first: number, length: number, faults: Pick<TapeJob, 'faults'>['faults']) => Promise<string[]>
}

export class Challenger {
  private readonly play: ChallengerPlay

  constructor (private readonly h: ChallengerHost) { this.play = new ChallengerPlay(h) }

  /**
   * The replay directory (replay-dir.ts), its downloads ended a few blocks before the last
   * block this node may open the dispute in: the challenge window's end, or an assigned
   * verifier's deadline for its reject's evidence if later. A defender serving them just
   * slowly enough never to time out would otherwise keep it past that block.
   */
  private async replayDir (
    chain: ChainClient, taskId: number, task: TaskInfo, runDir: string, step: number, defenderPeer: string
  ): Promise<Awaited<ReturnType<typeof ensureReplayDir>>> {
    const mine = await chain.myAssignment(taskId)
    const by = blockSignal(chain, Math.max(task.challengeEnd, mine?.deadline ?? 0) - FETCH_RESERVE_BLOCKS)
    try {
      return await ensureReplayDir(this.h.shards, taskId, task, runDir, step, defenderPeer, by.signal)
    } finally { by.stop() }
  }

  /**
   * A verifier (against the solver) or a whistleblower (against a verifier's
   * verdict: played as a SolverProof dispute against the task's solver, see
   * docs/disputes.md) disputes 1-based engine step `step`.
   */
  async challenge (taskId: number, against: 'solver' | 'verifier', step: number | undefined): Promise<DisputeResult> {
    const t0 = Date.now()
    if (step == null || !Number.isInteger(step) || step < 1) throw new Error(`task ${taskId}: no disputed step to challenge`)
    const chain = await this.h.chain()
    const task = await chain.task(taskId)
    if (task == null) throw new Error(`task ${taskId} does not exist on chain`)
    if (task.solver == null) throw new Error(`task ${taskId} has no solver`)
    if (against === 'verifier') this.h.log.info({ taskId, step }, 'a verdict accepted a wrong step: challenging the solver\'s proof (a verdict is disputed through the proof it judged; verifiers that accepted the step are slashed with the solver)')
    const defenderNode = await chain.node(task.solver)
    if (defenderNode == null) throw new Error(`the solver ${task.solver} is not registered`)
    const defenderPeer = Buffer.from(defenderNode.peerId.replace(/^0x/, ''), 'hex').toString('utf8')
    const rootEvery = await chain.rootEvery(taskId)
    // with a root every m > 1 steps every step is inside a segment but a diverged proof's last, disputed alone
    const { disputedStep: chainStep, shape } = disputeOfStep(task, rootEvery, step)
    if (shape.kind === 'segment') return await this.challengeSegment(t0, chain, taskId, task, rootEvery, defenderPeer, step)
    // announce the step: the defender tapes it while we tape ours, so the game can start as soon as the dispute is opened
    void request(this.h.peer.host, defenderPeer, { d: 0, prepare: { task: taskId, step: chainStep } }, 5_000).catch(() => {})
    const runDir = join(this.h.dataDir, 'verify', String(taskId))
    const { program, proof } = await this.replayDir(chain, taskId, task, runDir, step, defenderPeer)
    if (rootEveryOfProof(proof) !== rootEvery) throw new Error(`proof.json of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${rootEvery}`)
    const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const tape = await this.h.tapeInChild(runDir, step, join(dir, `task-${taskId}-step-${step}-challenger.cbor`), { datasetProofs: true })
    // only dispute what we can win: the pre-state is agreed, and the post-state is not, or the
    // step holds a NaN the defender committed, or a diverged step does not diverge as it says
    const pre = rootEvery > 1 ? rootAtStep(proof, step - 1) : proof.stateRoots[step - 1]
    // a forced error's marked leaf stands for the honest state it marks (protocols/dispute/forced-leaf.ts)
    if (!samePreHex(pre, tape.stateRootBefore)) throw new Error(`our state before step ${step} differs from the proof's: dispute an earlier step`)
    const nan = nanFacts(tape, task.divergence != null && step - 1 === task.stepCount ? task.divergence : undefined)
    if (nan.divergence !== undefined && !nan.wrong) throw new Error(`step ${step} diverges where the proof says: nothing to dispute`)
    if (!nan.wrong && tape.stateRootAfter === proof.stateRoots[step]) throw new Error(`step ${step} replays to the committed root: nothing to dispute`)
    const disputeId = Number(await chain.openDisputeCommitted(taskId, task.solver, 'SolverProof', chainStep))
    this.h.log.info({ taskId, disputeId, step, chainStep, defender: defenderPeer }, 'dispute opened on chain')
    // a one-step dispute: never the segment context, whatever m
    const ctx = contextOf(chain, taskId, disputeId)
    const game = makeChallenger({
      disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: hexToU8a(task.solver), program, nan,
      ...(shape.spacing !== undefined ? { spacing: shape.spacing } : {})
    })
    return await this.playOut({ t0, chain, taskId, disputeId, ctx, defenderKey: hexToU8a(task.solver), defenderPeer, step: step - 1, game })
  }

  /**
   * The same with a root every m > 1 steps (docs/disputes.md "Segments"): the
   * step lies in segment j, which we replay; we open j on chain only if our
   * replay agrees with leaf j and not with leaf j + 1. The defender's first
   * message is its signed segment; we open its first transition whose
   * post-root differs from ours and tape that step while the defender tapes it.
   */
  private async challengeSegment (
    t0: number, chain: ChainClient, taskId: number, task: TaskInfo, rootEvery: number, defenderPeer: string, step: number
  ): Promise<DisputeResult> {
    const runDir = join(this.h.dataDir, 'verify', String(taskId))
    const { j } = segmentOfStep(step - 1, task.stepCount, rootEvery)
    void request(this.h.peer.host, defenderPeer, { d: 0, prepare: { task: taskId, step: j } }, 5_000).catch(() => {})
    const { program, proof } = await this.replayDir(chain, taskId, task, runDir, committedStep(j, task.stepCount, rootEvery) + 1, defenderPeer)
    if (rootEveryOfProof(proof) !== rootEvery) throw new Error(`proof.json of task ${taskId} has a root every ${rootEveryOfProof(proof)} steps, the chain says ${rootEvery}`)
    const plan = segmentPlanOf(proof, step)
    const own = await this.h.segmentRootsInChild(runDir, plan.first, plan.length, { ops: [], weights: [] })
    const dir = join(this.h.dataDir, 'disputes'); mkdirSync(dir, { recursive: true })
    const tapeOf = async (s: number): Promise<TapeFile> => await this.h.tapeInChild(runDir, s, join(dir, `task-${taskId}-step-${s}-challenger.cbor`), { datasetProofs: true })
    // every root agrees: what is left to dispute is a NaN the defender committed in the step we were asked about
    const agreed = samePreHex(proof.stateRoots[plan.j], own[0]) && segmentEndAgrees(plan, proof, own)
    const nanTape = agreed ? await this.nanStepTape(tapeOf, step, plan, own) : undefined
    const nanAt = nanTape === undefined ? undefined : step - 1
    const no = segmentDisputeError(plan, proof, own, nanAt)
    if (no !== undefined) throw new Error(no)
    const disputeId = Number(await chain.openDisputeCommitted(taskId, task.solver!, 'SolverProof', plan.j))
    this.h.log.info({ taskId, disputeId, step, segment: plan.j, steps: `${plan.first + 1}…${plan.first + plan.length}`, nanAt, defender: defenderPeer }, 'segment dispute opened on chain')
    const ctx = contextOf(chain, taskId, disputeId, rootEvery)
    const defenderKey = hexToU8a(task.solver!)
    const sc = segmentChallengerOf({ disputeId, ctx, pair: chain.pair as KeyringPair, defender: defenderKey, plan, proof, own, nanAt })
    const open = async (incoming: Incoming): Promise<SegmentOpening> => {
      const opened = sc.onSegment(verifySigned(incoming.signed, defenderKey, verify, ctx), incoming.signed)
      if ('fail' in opened) return opened
      this.h.log.info({ disputeId, segment: plan.j, step: opened.step, nan: opened.step === nanAt }, 'opening the first step of the defender\'s segment whose post-root differs from our replay (or that holds a NaN)')
      const game = (async () => {
        const s = opened.step + 1
        const tape = opened.step === nanAt ? nanTape! : await tapeOf(s)
        if (tape.stateRootBefore !== own[opened.step - plan.first]) throw new Error(`our tape of step ${s} does not start from our replay of the segment`)
        return makeChallenger({
          disputeId, ctx, tape, stateRoots: proof.stateRoots, pair: chain.pair as KeyringPair, defender: defenderKey, program,
          nan: nanFacts(tape), segment: opened.segment
        })
      })()
      game.catch(() => {})
      return { send: opened.send, game }
    }
    return await this.playOut({ t0, chain, taskId, disputeId, ctx, defenderKey, defenderPeer, step: plan.first, open })
  }

  /**
   * Our tape of 1-based `step` when it holds a NaN the defender committed
   * (its pre-state agreed with our replay of the segment), else undefined:
   * an honest run commits none, so that transition is disputed though every
   * root of the segment agrees (docs/disputes.md "Segments").
   */
  private async nanStepTape (tapeOf: (s: number) => Promise<TapeFile>, step: number, plan: SegmentPlan, own: readonly string[]): Promise<TapeFile | undefined> {
    const tape = await tapeOf(step)
    return nanStepOf(tape, plan, own) === undefined ? undefined : tape
  }

  /** Plays the opened dispute to its end (ChallengerPlay.playOut). */
  private async playOut (o: PlayOut): Promise<DisputeResult> { return await this.play.playOut(o) }
}
