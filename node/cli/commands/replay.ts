import type { Command } from 'commander'
import { writeFileSync } from 'node:fs'
import { STATE_PSEUDO_KERNEL } from '../../../protocols/tape/tape.js'
import { isStateConversion } from '../../../protocols/tape/state-io.js'
import { BACKEND_CHOICES, type BackendChoice } from '../../train/backend.js'
import { cliLog, intOpt, wrapError } from '../train-util.js'
import { tapeRunStep } from '../../train/run.js'
import { replayStep, replaySteps, type ReplayResult } from '../../train/replay-many.js'
import { reexecuteOp, sameBits } from '../../train/tape-recorder.js'

interface ReplayOpts {
  proof: string
  step?: string
  steps?: string
  json?: boolean
  datasetDir?: string
  backend: string
  logLevel?: string
  tape?: boolean
  tapeOut?: string
}

export function register (program: Command): void {
  program.command('replay')
    .description('re-execute one training step from the nearest checkpoint and compare its state root with the proof')
    .requiredOption('--proof <dir>', 'run directory written by `proofswarm train`')
    .option('--step <n>', 'step to re-execute (1 = the first step); with state roots every m > 1 steps, the segment holding it')
    .option('--steps <list>', 'several steps (comma-separated), each from its nearest checkpoint, in one engine; stops at the first mismatch')
    .option('--tape', 'also record the op tape of the step and re-execute every op in isolation')
    .option('--tape-out <file>', 'with --tape: write the tape entries (JSON) to this file')
    .option('--backend <b>', `${BACKEND_CHOICES.join(' | ')}`, 'auto')
    .option('--dataset-dir <dir>', 'where the IDX files are')
    .option('--json', 'print the result as JSON')
    .option('--log-level <level>', 'log level', 'info')
    .action(async (o: ReplayOpts) => {
      try {
        const log = cliLog('replay', o.logLevel)
        if (o.steps != null) {
          // one engine start for many intervals: a verifier's whole sample
          const steps = o.steps.split(',').map(x => intOpt(x.trim(), '--steps', 1, 500_000) as number)
          const results = await replaySteps({ proofDir: o.proof, steps, datasetDir: o.datasetDir, backend: o.backend as BackendChoice, log })
          if (o.json === true) process.stdout.write(JSON.stringify({ results }) + '\n')
          else for (const r of results) process.stdout.write(`${unitName(r)} (from checkpoint ${r.fromCheckpoint}): ${r.match ? 'match' : 'MISMATCH'}${mismatchNote(r)}\n`)
          if (results.some(r => !r.match || r.firstMismatch != null)) process.exitCode = 2
          return
        }
        if (o.step == null) throw new Error('give --step <n> or --steps <list>')
        const step = intOpt(o.step, '--step', 1, 500_000) as number
        const r = await replayStep({ proofDir: o.proof, step, datasetDir: o.datasetDir, backend: o.backend as BackendChoice, log })
        let tape: Record<string, unknown> | undefined
        if (o.tape === true) {
          const tr = await tapeRunStep({ proofDir: o.proof, step, datasetDir: o.datasetDir, backend: o.backend as BackendChoice, log })
          const mismatches: string[] = []
          let ops = 0
          // a chunked program's state conversions are identities (reexecuteOp), checked like ops, counted apart
          let conversions = 0
          for (const e of tr.entries) {
            if (e.kernel === STATE_PSEUDO_KERNEL) continue
            const outs = reexecuteOp(e, tr.values[e.index].inputs)
            if (!outs.every((x, j) => sameBits(x, tr.values[e.index].outputs[j]))) mismatches.push(`${e.index}:${e.kernel}`)
            if (isStateConversion(e.kernel)) conversions++
            else ops++
          }
          if (o.tapeOut !== undefined) writeFileSync(o.tapeOut, JSON.stringify({ version: 1, step, tapeRoot: tr.tapeRoot, skeletonRoot: tr.skeletonRoot, stateNames: tr.stateNames, entries: tr.entries }) + '\n')
          tape = {
            tapeRoot: tr.tapeRoot, skeletonRoot: tr.skeletonRoot, kernels: ops, ...(conversions > 0 ? { conversions } : {}),
            reexecutedBitwise: ops + conversions - mismatches.length, mismatches,
            // with roots every m > 1 steps only a segment's last step has a committed root after it
            stateRootAfterMatches: r.step === step ? tr.stateRootAfter === r.expected : undefined
          }
        }
        if (o.json === true) process.stdout.write(JSON.stringify({ ...r, tape }) + '\n')
        else {
          process.stdout.write(`${unitName(r)} (from checkpoint ${r.fromCheckpoint}): ${r.match ? 'match' : 'MISMATCH'}${mismatchNote(r)}\n  expected ${r.expected}\n  actual   ${r.actual}\n`)
          if (tape !== undefined) process.stdout.write(`  op tape: ${String(tape.kernels)} kernels${tape.conversions !== undefined ? ` and ${String(tape.conversions)} state conversions` : ''}, ${String(tape.reexecutedBitwise)} re-executed bitwise, tape root ${String(tape.tapeRoot)}, skeleton root ${String(tape.skeletonRoot)}\n`)
        }
        if (!r.match || (tape !== undefined && (tape.mismatches as string[]).length > 0)) process.exitCode = 2
      } catch (e) { wrapError(e) }
    })
}

/** "step s", or with roots every m > 1 steps the segment replayed and the committed step compared. */
function unitName (r: ReplayResult): string {
  return r.segment === undefined ? `step ${r.step}` : `segment ${r.segment} (to committed step ${r.step})`
}

/** At m > 1: which committed root differs (a step inside the segment is the dispute's to find). */
function mismatchNote (r: ReplayResult): string {
  return r.segment !== undefined && r.firstMismatch !== undefined ? `, the committed root of step ${r.firstMismatch} differs` : ''
}
