import { readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { timeCheckpointCoding } from './calibrate.js'
import { ensureFashion, type ShowProgress } from './dataset.js'
import { runEngineJob } from '../node/engine/engine.js'
import { createLogger } from '../node/log.js'
import { spawnCli } from './processes.js'
import { FASHION_DIR } from './scenario.js'
import { CALIBRATION_STEPS, GPT_CALIBRATION_STEPS, MAX_SPACING_FACTOR, MIN_SOLVE_BLOCKS, challengeWindowFor, checkpointSpacingFor, solveTimeoutFor } from './timing.js'
import { defaultRuntime } from '../node/train/default-runtime.js'
import { committedSpacing } from '../protocols/pol/segments.js'
import { validateProgram } from '../protocols/program/program.js'
import { REFERENCE_FLOPS } from '../protocols/scheduling/estimate.js'
import { programChallengeBlocks } from '../protocols/scheduling/feasibility.js'
import { DEFAULT_ECONOMICS } from '../node/roles/economics.js'

// The devnet's task program: one of the built-in tasks (the MLP on
// Fashion-MNIST, a small GPT on Debian's fortunes-min) or a given file; then,
// unless given, the challenge window and (built-in tasks) the checkpoint
// spacing from this machine's measured speed on the task itself.

export const BUILTIN_TASKS = ['mlp', 'gpt'] as const
export type BuiltinTask = typeof BUILTIN_TASKS[number]

/**
 * The GPT the devnet trains by default: the zoo's GPT (2 blocks, d 64, 4 heads,
 * MLP 256) on a context of 32 characters, 150 Adam steps of 16 windows (77k
 * characters, most of one pass over fortunes-min): a held-out loss well under
 * the corpus's unigram baseline from ~20 s of training on this machine idle
 * (docs/training.md, "GPT").
 */
export const GPT_DEFAULTS = { steps: 150, batch: 16, context: 32, lr: 0.003 }
export const MLP_DEFAULTS = { steps: 1000, batch: 64 }

export interface TaskOptions {
  task?: string
  steps?: number
  checkpointEvery?: number
  rootEvery?: number
  synthetic?: boolean
  challengeWindow?: number
  blockTime: number
}

export interface PreparedTask { file: string, builtin?: BuiltinTask, steps: number, rootEvery: number, challengeWindow: number, solveTimeout: number }

type Say = (msg: string, data?: Record<string, unknown>) => void

export function builtinOf (task: string | undefined): BuiltinTask | undefined {
  if (task == null) return 'mlp'
  return (BUILTIN_TASKS as readonly string[]).includes(task) ? task as BuiltinTask : undefined
}

export async function prepareTask (o: TaskOptions, dir: string, logDir: string, say: Say, show?: ShowProgress): Promise<PreparedTask> {
  const builtin = builtinOf(o.task)
  const file = builtin != null ? join(dir, 'task.json') : resolve(o.task!)
  const spacing = [...(o.checkpointEvery != null ? ['--checkpoint-every', String(o.checkpointEvery)] : []), ...(o.rootEvery != null ? ['--root-every', String(o.rootEvery)] : [])]
  // task new's default: psk1 when its addon is built here, else the old runtime (with why)
  const rt = defaultRuntime()
  const runtime = ['--runtime', rt.runtime]
  if (builtin != null) say(`runtime: ${rt.runtime}${rt.native ? ' (native psk1 kernels)' : ` (${rt.warning ?? ''})`}`)
  // what the task trains, said once its program (and the root spacing task new chose) is written
  let what: string
  if (builtin === 'mlp') {
    const useFashion = o.synthetic !== true
    if (useFashion) await ensureFashion(say, show)
    else say('--synthetic: the task trains on a generated dataset, not Fashion-MNIST (its accuracy means nothing)')
    const steps = o.steps ?? MLP_DEFAULTS.steps
    await taskNew(['--model', 'mlp', '--dataset', useFashion ? FASHION_DIR : 'synthetic', '--steps', String(steps), '--batch', String(MLP_DEFAULTS.batch), '--optimizer', 'adam', '--out', file, ...spacing, ...runtime], logDir)
    what = `mlp 784-128-10 on ${useFashion ? 'Fashion-MNIST' : 'a synthetic dataset'}, ${steps} Adam steps of batch ${MLP_DEFAULTS.batch}`
  } else if (builtin === 'gpt') {
    const g = GPT_DEFAULTS
    const steps = o.steps ?? g.steps
    await taskNew(['--model', 'gpt', '--dataset', 'fortunes-min', '--steps', String(steps), '--batch', String(g.batch), '--context', String(g.context), '--lr', String(g.lr), '--optimizer', 'adam', '--out', file, ...spacing, ...runtime], logDir)
    what = `GPT (2 blocks, d 64, 4 heads, context ${g.context}, character level) on fortunes-min, ${steps} Adam steps of ${g.batch} windows`
  } else {
    what = file
  }
  const prog = JSON.parse(await readFile(file, 'utf8')) as { steps: number, batchSize: number, checkpointEvery: number, rootEvery?: number, model?: { name?: string } }
  say(builtin != null ? `task program: ${what}, ${rootsNote(prog.rootEvery ?? 1)} (${file})` : `task program: ${what} (${rootsNote(prog.rootEvery ?? 1)})`, { rootEvery: prog.rootEvery ?? 1 })
  // without a calibration, as many blocks as steps (an MLP step is well under a block)
  if (o.challengeWindow != null) {
    const min = chainMinWindow(prog, o.blockTime)
    if (o.challengeWindow < min) throw new Error(`--challenge-window ${o.challengeWindow} is shorter than the ${min} blocks the chain takes for this task (a drawn verifier's replay of its sample and a reject's evidence, twice over at the reference speed, plus the draw and the transactions)`)
    const solveTimeout = Math.max(MIN_SOLVE_BLOCKS, prog.steps)
    return { file, builtin, steps: prog.steps, rootEvery: prog.rootEvery ?? 1, challengeWindow: o.challengeWindow, solveTimeout }
  }

  // the challenge window, from this machine's speed on this task
  const calSteps = Math.min(prog.model?.name === 'gpt' ? GPT_CALIBRATION_STEPS : CALIBRATION_STEPS, prog.steps)
  const calDir = join(dir, 'calibration')
  // the engine's train job, as a solver peer runs it; its log lines go to calibrate.log
  const calLog = join(logDir, 'calibrate.log')
  const lines: string[] = []
  const r = await runEngineJob({ kind: 'train', taskFile: file, outDir: calDir, until: calSteps, evaluate: false }, createLogger('devnet', { level: 'warn' }), 'calibration', {
    onEvent: e => { if (e.type === 'log') lines.push(`${e.level}: ${e.message}`) }
  }).result.then(t => ({ samplesPerSec: Math.round(t.samplesPerSec) }), (err: Error) => { lines.push(`error: ${err.message}`); return undefined })
  await writeFile(calLog, lines.join('\n') + '\n')
  if (r?.samplesPerSec == null) throw new Error(`could not time the task on this machine; see ${calLog} (or give --challenge-window)`)
  // a built-in task's checkpoints spaced by what one costs here, erasure coding included
  if (builtin != null && o.checkpointEvery == null) {
    const ck = timeCheckpointCoding(calDir)
    if (ck != null) {
      const sp = checkpointSpacingFor({ steps: prog.steps, batchSize: prog.batchSize, samplesPerSec: r.samplesPerSec, codeMs: ck.ms, stateBytes: ck.bytes })
      // every checkpoint is a committed state: a multiple of the root spacing m, at most the steps
      const m = prog.rootEvery ?? 1
      const every = committedSpacing(sp.every, prog.steps, m)
      say(`checkpoints every ${every} steps (${Math.ceil(prog.steps / every) + 1} of them): one costs ~${sp.costSteps.toFixed(1)} training steps here (erasure coding ${ck.ms.toFixed(0)} ms, a step ${sp.stepMs.toFixed(1)} ms)${sp.every < sp.optimum ? `; the least work would be every ${sp.optimum}, capped at ${MAX_SPACING_FACTOR}× the default so each verifier replays a small share of the run` : ''}${every !== sp.every ? ` (${sp.every} rounded to a multiple of the root spacing ${m})` : ''}`, { checkpointEvery: every, codeMs: ck.ms, stepMs: sp.stepMs })
      prog.checkpointEvery = every
      await writeFile(file, JSON.stringify(prog, null, 2) + '\n')
    }
  }
  await rm(calDir, { recursive: true, force: true })
  const chainMin = chainMinWindow(prog, o.blockTime)
  const w = challengeWindowFor({ steps: prog.steps, batchSize: prog.batchSize, samplesPerSec: r.samplesPerSec, blockTimeMs: o.blockTime, chainMin })
  const path = `twice a whistleblower's full replay (~${w.replaySeconds.toFixed(1)} s at ${r.samplesPerSec} samples/s measured here) plus its dispute`
  const why = w.blocks === chainMin ? `the chain's minimum for the task, more than ${path} (${w.windowSeconds.toFixed(0)} s)` : path
  say(`challenge window: ${w.blocks} blocks (~${Math.round(w.blocks * o.blockTime / 1000)} s), ${why}`, { challengeWindow: w.blocks, chainMin, samplesPerSec: r.samplesPerSec })
  return {
    file,
    builtin,
    steps: prog.steps,
    rootEvery: prog.rootEvery ?? 1,
    challengeWindow: w.blocks,
    solveTimeout: solveTimeoutFor({ replaySeconds: w.replaySeconds, blockTimeMs: o.blockTime })
  }
}

/**
 * The fewest blocks the devnet's chain takes as the task's challenge window:
 * minChallengeBlocks at its reference speed (REFERENCE_FLOPS over the block
 * time, what `proofswarm chain` sets by default) for the submitter's default
 * verifier count (the devnet asks no other).
 */
export function chainMinWindow (prog: unknown, blockTimeMs: number): number {
  return programChallengeBlocks(validateProgram(prog), DEFAULT_ECONOMICS.verifierCount, REFERENCE_FLOPS * blockTimeMs / 1000)
}

const rootsNote = (m: number): string => m > 1 ? `a state root every ${m} steps` : 'a state root after every step'

async function taskNew (args: string[], logDir: string): Promise<void> {
  const t = spawnCli('task-new', ['task', 'new', ...args], logDir)
  if (await t.exited !== 0) throw new Error(`could not create the task program; see ${t.logFile}`)
}
