import type { TaskProgram } from '../program/program.js'
import type { TopologyInfo } from '../program/topology.js'
import { segmentCount } from '../pol/segments.js'
import { requiredSampleCount } from '../verification/verdict.js'

// Estimates of a job's memory, work and run time, from what the task program
// says. Rough on purpose: they decide how many jobs run side by side, whether a
// queued job can still make its deadline, and (on chain) whether any conforming
// solver could train a task at all and any drawn verifier check it within its
// challenge window, so they err towards more memory and work
// and learn the speed from the jobs this peer finished.

export interface ProgramSize {
  /** trainable parameters */
  params: number
  optimizer: 'sgd' | 'adam'
  batchSize: number
  steps: number
  /** values per input row and per label row */
  rowSize: number
  classes: number
  /** training rows the engine holds */
  trainSize: number
  datasetKind: 'idx' | 'synthetic' | 'text'
  /** text tasks: characters per window (rows are built from the corpus on the fly) */
  context?: number
  /** forward multiply-adds and values of one sample (TopologyInfo) */
  macs: number
  activations: number
}

/** What the estimates need of a validated program. */
export function programSize (p: TaskProgram & { info: TopologyInfo }): ProgramSize {
  return {
    params: p.info.params,
    optimizer: p.optimizer.name,
    batchSize: p.batchSize,
    steps: p.steps,
    rowSize: p.dataset.rowSize,
    classes: p.dataset.classes,
    trainSize: p.dataset.trainSize,
    datasetKind: p.dataset.kind,
    context: p.dataset.text?.context,
    macs: p.info.macs,
    activations: p.info.activations
  }
}

/**
 * Floating-point operations of one training step: a multiply-add is two, and the
 * backward pass costs about twice the forward one.
 */
export function stepFlops (p: ProgramSize): number {
  return 6 * p.macs * p.batchSize
}

const MiB = 1024 * 1024
/**
 * A training or replay engine process before it holds a model: Node, tfjs and
 * its wasm backend (measured: 162 MiB peak for a 40-step MLP on a synthetic
 * dataset, 226 MiB on Fashion-MNIST whose rows add ~47 MB).
 */
export const ENGINE_BASE_BYTES = 170 * MiB

/**
 * Training speed every solver of a network is expected to reach, FLOP/s: about a
 * fifth of one core of the 2-core build machine with the psk1 kernels (MLP and
 * CNN, verifiable: ~5 GFLOP/s), three quarters of the old runtime's slowest model
 * (its CNN, ~1.3 GFLOP/s; docs/benchmarks.md). Chains take their
 * `reference_flops_per_block` from it and their block time.
 */
export const REFERENCE_FLOPS = 1e9

/**
 * The fewest blocks a task's solve timeout may have: its training at `flopsPerBlock`,
 * and as much again for checkpoints, their coding and publishing.
 */
export function minSolveBlocks (p: ProgramSize, flopsPerBlock: number): number {
  return Math.ceil(2 * stepFlops(p) * p.steps / flopsPerBlock)
}

/** Millionths of a block: the unit of a program's per-step cost at the reference speed. */
export const MICROBLOCKS = 1_000_000

/**
 * One training step of the program at `flopsPerBlock`, in millionths of a block
 * (rounded up): what the chain stores at submit_task to price a dispute's re-run
 * by the program's own cost rather than by the submitter's solve_timeout.
 */
export function stepCostMicroblocks (p: ProgramSize, flopsPerBlock: number): number {
  return Math.ceil(stepFlops(p) * MICROBLOCKS / flopsPerBlock)
}

/**
 * The work of starting a re-run besides its steps, at the reference speed: an
 * engine process (Node, tfjs, its wasm backend), the checkpoint's load and the
 * tape's writing. A tape of one MLP step takes ~4 s in all (devnet timing's
 * measured dispute overhead), nearly all of it this.
 */
export const RERUN_START_FLOPS = 4 * REFERENCE_FLOPS

/**
 * Blocks a re-run of `steps` steps takes at the reference speed, twice over as
 * in minSolveBlocks (the tape records every op's values beside the training's
 * work), plus its start (RERUN_START_FLOPS): a dispute's tape allowance when the
 * submitter's solve_timeout allows more.
 */
export function referenceRerunBlocks (steps: number, stepMicroblocks: number, flopsPerBlock: number): number {
  return Math.ceil(2 * steps * stepMicroblocks / MICROBLOCKS) + Math.ceil(RERUN_START_FLOPS / flopsPerBlock)
}

/**
 * Blocks a challenge window gives a verifier beyond its replays: the draw
 * comes in the second block after the commit (the first is the randomness
 * block that seeds it and the sample), then one block each for the verdict's
 * and the dispute's inclusion, and four for starting the two engine processes
 * (the sample's replay and the evidence's re-run) and loading their data,
 * ~2 s each, at 1 s blocks. Generous at slower blocks, as a margin should be.
 */
export const CHALLENGE_MARGIN_BLOCKS = 8

/** What the challenge window's bound needs of a task besides its program's size. */
export interface ChallengeShape { checkpointEvery: number, rootEvery: number, verifierCount: number }

/**
 * The most steps a drawn verifier replays before its deadline. Its required
 * sample, requiredSampleCount(verifierCount) units (segments at a root every m
 * steps; at most all of them), each replayed from the checkpoint before it: at
 * most checkpointEvery + m steps, and never a step twice (samples in one
 * interval share a replay, sample.ts checkpointLoads), so at most the whole run.
 * Then, to back a reject, one more such replay: the disputed unit re-run from
 * its checkpoint for the dispute's evidence.
 */
export function challengeReplaySteps (steps: number, t: ChallengeShape): number {
  const units = Math.min(requiredSampleCount(t.verifierCount), segmentCount(steps, t.rootEvery))
  const perUnit = Math.min(t.checkpointEvery + t.rootEvery, steps)
  return Math.min(units * perUnit, steps) + perUnit
}

/**
 * The fewest blocks a task's challenge window may have: a drawn verifier's
 * replays (challengeReplaySteps) at `flopsPerBlock`, twice over as in
 * minSolveBlocks (fetching the checkpoints, margin), plus CHALLENGE_MARGIN_BLOCKS.
 */
export function minChallengeBlocks (p: ProgramSize, t: ChallengeShape, flopsPerBlock: number): number {
  return Math.ceil(2 * stepFlops(p) * challengeReplaySteps(p.steps, t) / flopsPerBlock) + CHALLENGE_MARGIN_BLOCKS
}

/** Peak bytes of one training or replay job of this program. */
export function jobMemory (p: ProgramSize): number {
  const slots = p.optimizer === 'adam' ? 2 : 0
  // weights, gradients and optimizer slots, float32, with a copy each for the state roots and checkpoints
  const state = p.params * 4 * (2 + slots) * 2
  // rows are kept as uint8 (text: the corpus' characters)
  const data = p.datasetKind === 'text' ? p.trainSize * (p.context ?? 64) : p.trainSize * (p.rowSize + 1)
  // a batch's inputs, labels and a few activations of that width, float32
  const batch = p.batchSize * (p.rowSize + p.classes) * 4 * 8
  // every layer's outputs, kept for the backward pass, their gradients and a temporary each
  const layers = p.batchSize * p.activations * 4 * 3
  return Math.ceil((ENGINE_BASE_BYTES + state + data + batch + layers) * 1.1)
}

/**
 * Run-time estimates learned from finished jobs: training as ms per step,
 * verification as ms per job (a replay of a sample plus checkpoint fetches),
 * each an exponential moving average that starts from a deliberately low
 * guess, so a peer does not refuse work before it has measured itself.
 */
export class SpeedEstimate {
  private msPerStep: number
  private msPerVerify: number

  constructor (o: { msPerStep?: number, msPerVerify?: number } = {}) {
    this.msPerStep = o.msPerStep ?? 5
    this.msPerVerify = o.msPerVerify ?? 5000
  }

  train (steps: number): number { return Math.ceil(steps * this.msPerStep) }
  verify (): number { return Math.ceil(this.msPerVerify) }

  /** A training job of `steps` took `ms` (with whatever else ran beside it). */
  observeTrain (steps: number, ms: number): void {
    if (steps > 0 && ms > 0) this.msPerStep = 0.7 * this.msPerStep + 0.3 * (ms / steps)
  }

  observeVerify (ms: number): void {
    if (ms > 0) this.msPerVerify = 0.7 * this.msPerVerify + 0.3 * ms
  }
}
