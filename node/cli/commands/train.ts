import { Option, type Command } from 'commander'
import { parseOpFault } from '../../train/fault-spec.js'
import { BACKEND_CHOICES, type BackendChoice } from '../../train/backend-choice.js'
import { cliEvents, cliLog, intOpt, wrapError } from '../train-util.js'
import { runJob } from '../../engine/jobs.js'
import { readProgram } from '../../train/store.js'
import { CliError } from '../errors.js'

interface TrainOpts {
  task: string
  out: string
  backend: string
  resume?: boolean
  json?: boolean
  datasetDir?: string
  until?: string
  evaluate: boolean
  logLevel?: string
  faultOp?: string[]
  faultWeight?: string[]
  faultNanThrough?: boolean
  faultDiverge?: string
  plain?: boolean
}

export function register (program: Command): void {
  program.command('train')
    .description('train a task locally; writes checkpoints, proof-of-learning and model to --out')
    .requiredOption('--task <file>', 'task program (JSON, from `proofswarm task new`)')
    .requiredOption('--out <dir>', 'run directory (checkpoints/, proof.json, model/)')
    .option('--backend <b>', `${BACKEND_CHOICES.join(' | ')} (auto: the task's pinned runtime)`, 'auto')
    .option('--dataset-dir <dir>', 'where the IDX files are (default /usr/share/datasets/fashion-mnist)')
    .option('--resume', 'continue from the latest checkpoint in --out')
    .option('--until <step>', 'stop after this many steps (continue later with --resume)')
    .option('--no-evaluate', 'skip the test-set accuracy at the end')
    .option('--plain', 'plain training: no state roots, checkpoints or proof (fast local training; the baseline verifiable runs are measured against)')
    .option('--json', 'print a JSON summary on stdout')
    .option('--log-level <level>', 'log level', 'info')
    // FAULT INJECTION (tests, devnet, Truebit forced errors; node/train/fault.ts): hidden on purpose
    .addOption(new Option('--fault-op <kernel@step>', 'FAULT INJECTION: corrupt the first <kernel> op output at 1-based <step>').argParser((v: string, p: string[] = []) => [...p, v]).hideHelp())
    .addOption(new Option('--fault-diverge <step>', 'FAULT INJECTION: stop before 1-based <step> and commit a diverged proof with a made-up divergence point').hideHelp())
    .addOption(new Option('--fault-nan-through', 'FAULT INJECTION: train on through a NaN and write a complete proof (an honest run ends at its first NaN)').hideHelp())
    .addOption(new Option('--fault-weight <step>', 'FAULT INJECTION: perturb a weight after 1-based <step> (0: the initial state)').argParser((v: string, p: string[] = []) => [...p, v]).hideHelp())
    .action(async (o: TrainOpts) => {
      try {
        if (!BACKEND_CHOICES.includes(o.backend as BackendChoice)) throw new CliError(`--backend must be one of ${BACKEND_CHOICES.join(', ')}`)
        const programJson = readProgram(o.task)
        const until = intOpt(o.until, '--until', 1, 500_000)
        const fakeDivergence = intOpt(o.faultDiverge, '--fault-diverge', 1, 500_000)
        // the engine's train job, run here; what it prints comes from its events, as a peer's progress does
        const r = await runJob({
          kind: 'train',
          taskFile: o.task,
          outDir: o.out,
          datasetDir: o.datasetDir,
          backend: o.backend as BackendChoice,
          resume: o.resume === true,
          ...(until !== undefined ? { until } : {}),
          evaluate: o.evaluate,
          plain: o.plain === true,
          faults: {
            ops: (o.faultOp ?? []).map(parseOpFault),
            weights: (o.faultWeight ?? []).map(w => intOpt(w, '--fault-weight', 0, 500_000) as number),
            ...(o.faultNanThrough === true ? { nanThrough: true } : {}),
            ...(fakeDivergence !== undefined ? { fakeDivergence } : {})
          }
        }, cliEvents(cliLog('train', o.logLevel)))
        const summary = {
          outDir: r.outDir, programHash: r.programHash, backend: r.backend.name, runtime: r.backend.runtime, verifiable: r.backend.verifiable,
          steps: r.steps, completed: r.completed, resumedFrom: r.resumedFrom, loss: r.loss, accuracy: r.accuracy, text: r.text,
          seconds: Number(r.seconds.toFixed(3)), samplesPerSec: Math.round(r.samplesPerSec), cpuSeconds: Number(r.cpuSeconds.toFixed(3)),
          proofRoot: r.proofRoot ?? null, finalStateRoot: r.finalStateRoot ?? null, proofWritten: r.proofWritten, checkpoints: r.checkpoints.length,
          ...(r.divergence !== undefined ? { divergence: r.divergence } : {}),
          ...(r.hashing !== undefined ? { hashing: r.hashing.mode } : {}),
          ...(r.backend.kernels !== undefined ? { kernels: r.backend.kernels, kernelThreads: r.backend.threads } : {}),
          ...(r.backend.gradKernels !== undefined ? { gradKernels: r.backend.gradKernels } : {})
        }
        if (o.json === true) process.stdout.write(JSON.stringify(summary) + '\n')
        else {
          process.stdout.write(`trained ${r.steps}/${programJson.steps} steps in ${r.seconds.toFixed(1)} s (${Math.round(r.samplesPerSec)} samples/s) on ${r.backend.runtime}\n`)
          if (r.accuracy !== undefined) process.stdout.write(`test accuracy ${(100 * r.accuracy).toFixed(2)}%\n`)
          if (r.divergence !== undefined) process.stdout.write(`the run diverged: step ${r.divergence.step + 1} produced a NaN (entry ${r.divergence.entry}, element ${r.divergence.flat} of its op tape); a diverged proof of ${r.steps} steps\n`)
          if (r.text !== undefined) process.stdout.write(`validation loss ${r.text.validationLoss.toFixed(4)} nats/token (perplexity ${Math.exp(r.text.validationLoss).toFixed(2)}); unigram baseline ${r.text.unigramBaseline.toFixed(4)}\nsample: ${JSON.stringify(r.text.sample)}\n`)
          process.stdout.write(r.proofWritten ? `proof root ${r.proofRoot}\n` : 'no proof written (run incomplete or backend not the pinned runtime)\n')
        }
      } catch (e) { wrapError(e) }
    })
}
