import type { Command } from 'commander'
import { BACKEND_CHOICES, type BackendChoice } from '../../train/backend-choice.js'
import { cliEvents, cliLog, wrapError } from '../train-util.js'
import { runJob } from '../../engine/jobs.js'

interface EvalOpts { model: string, json?: boolean, datasetDir?: string, backend: string, logLevel?: string }

export function register (program: Command): void {
  program.command('evaluate')
    .description('test-set accuracy of a trained model (a GPT: held-out loss)')
    .requiredOption('--model <dir>', 'run directory (or its model/ subdirectory)')
    .option('--backend <b>', `${BACKEND_CHOICES.join(' | ')}`, 'auto')
    .option('--dataset-dir <dir>', 'where the IDX files are')
    .option('--json', 'print the result as JSON')
    .option('--log-level <level>', 'log level', 'info')
    .action(async (o: EvalOpts) => {
      try {
        const r = await runJob({ kind: 'evaluate', modelDir: o.model, datasetDir: o.datasetDir, backend: o.backend as BackendChoice }, cliEvents(cliLog('evaluate', o.logLevel)))
        if (o.json === true) process.stdout.write(JSON.stringify(r) + '\n')
        else if (r.validationLoss !== undefined) process.stdout.write(`validation loss ${r.validationLoss.toFixed(4)} nats/token on ${r.testSize} held-out windows\n`)
        else process.stdout.write(`test accuracy ${(100 * r.accuracy).toFixed(2)}% on ${r.testSize} samples\n`)
      } catch (e) { wrapError(e) }
    })
}
