import type { CollectedResult } from '../../actors/ports.js'
import type { NarrowStep } from '../../protocols/dispute/narrowing.js'
import type { TraceEntry } from '../../actors/trace.js'
import type { ChainView } from './chain-watch.js'
import type { BalanceSample } from './balance-history.js'
import type { PeerView } from './peer-watch.js'

// What the dashboard serves to the page.

export interface TaskWorker { peer: string, actorId: string, role: string, state: string, relation: string }
/** What the page draws for a task: its loss curve, the steps each verifier checked, the disputed and forced steps, the result. */
export interface TaskPictures {
  /** the solver's training loss by step (its progress reports) */
  curve?: { peer: string, phase: string, steps?: number, points: Array<[number, number]> }
  /** the trained model as the submitter evaluated it: test accuracy, or a text model's held-out loss, baseline and sample */
  result?: CollectedResult
  /** accepting or rejecting verdicts on chain, with the steps each verifier checked */
  samples: Array<{ verifier: string, accept: boolean, void: boolean, steps: number[] }>
  /** peers replaying every step (whistleblowers) */
  replayingAll: string[]
  /** the disputed transition, or at m > 1 the disputed segment's first (`step`) and last (`lastStep`) transitions */
  disputed: Array<{ disputeId: string, step: number, lastStep?: number, segment?: number, status: string }>
  forcedStep?: number
  steps?: number
  /** the task's state-root spacing m: at m > 1 the chain's units are segments, drawn here as their steps */
  rootEvery?: number
  checkpointEvery?: number
}
export interface TaskRow {
  id: string
  phase: string
  /** chain: read from the chain by the dashboard; peer:<name>: the chain's view as that peer reported it; actors: inferred */
  phaseSource: string
  chain?: ChainView['tasks'][number]
  workers: TaskWorker[]
  pictures: TaskPictures
}

export interface DisputeRound { time?: number, blockNumber?: number, source: 'trace' | 'chain' | 'gossip', peer?: string, actorId?: string, event: string, detail?: Record<string, unknown> }
export interface DisputeRow {
  id: string
  taskId?: string
  chain?: ChainView['disputes'][number]
  rounds: DisputeRound[]
  status: string
  /** ChallengerWon / DefenderWon (from the chain, or a peer's chain.disputeResolved trace) */
  verdict?: string
  /** winner account (hex) and how it was decided, from the chain's DisputeResolved event */
  winner?: string
  how?: string
  slashed?: string
  /** how the bisection narrowed (from the challenger's record), and the claim the chain ruled on */
  narrowing?: NarrowStep[]
  narrowedBy?: string
  claim?: { kind: string, reason: string }
}

export interface DashboardState {
  time: number
  peers: PeerView[]
  tasks: TaskRow[]
  disputes: DisputeRow[]
  chain: ChainView
  traces: TraceEntry[]
}

export type DashboardEvent = { type: 'state', state: DashboardState } | { type: 'trace', entry: TraceEntry } | { type: 'balance', sample: BalanceSample }
