import type { Command } from 'commander'
import { BACKEND_CHOICES, type BackendChoice } from '../../train/backend.js'
import { cliLog, intOpt, wrapError } from '../../train/cli-util.js'
import { replayStep } from '../../train/run.js'

interface ReplayOpts { proof: string, step: string, json?: boolean, datasetDir?: string, backend: string, logLevel?: string }

export function register (program: Command): void {
  program.command('replay')
    .description('re-execute one training step from the nearest checkpoint and compare its state root with the proof')
    .requiredOption('--proof <dir>', 'run directory written by `proofswarm train`')
    .requiredOption('--step <n>', 'step to re-execute (1 = the first step)')
    .option('--backend <b>', `${BACKEND_CHOICES.join(' | ')}`, 'auto')
    .option('--dataset-dir <dir>', 'where the IDX files are')
    .option('--json', 'print the result as JSON')
    .option('--log-level <level>', 'log level', 'info')
    .action(async (o: ReplayOpts) => {
      try {
        const r = await replayStep({ proofDir: o.proof, step: intOpt(o.step, '--step', 1, 10_000_000) as number, datasetDir: o.datasetDir, backend: o.backend as BackendChoice, log: cliLog('replay', o.logLevel) })
        if (o.json === true) process.stdout.write(JSON.stringify(r) + '\n')
        else process.stdout.write(`step ${r.step} (from checkpoint ${r.fromCheckpoint}): ${r.match ? 'match' : 'MISMATCH'}\n  expected ${r.expected}\n  actual   ${r.actual}\n`)
        if (!r.match) process.exitCode = 2
      } catch (e) { wrapError(e) }
    })
}
