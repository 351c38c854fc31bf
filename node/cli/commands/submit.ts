import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { admissibility } from '../../../protocols/program/admissible.js'
import { validateProgram } from '../../../protocols/program/program.js'
import { supportsElement } from '../../../protocols/reference/index.js'
import { ControlClient } from '../../control/client.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

// Submit a task through a running peer with the submitter role: the peer
// commits it on chain (escrow), publishes the program and dataset as shards
// and announces it; the swarm does the rest.
export function register (program: Command): void {
  const cmd = program.command('submit')
    .description('submit a training task (from "proofswarm task new") through a running peer with the submitter role')
    .requiredOption('--task <file>', 'task program JSON')
    .option('--solver-reward <units>', 'paid to the solver on success (whole units; default: 100, or the chain\'s floor for the task when more: its training at reference_block_price; less is refused)')
    .option('--verifier-reward <units>', 'paid to each verifier (whole units; default: 10, or the chain\'s floor for the task when more: one verifier\'s replay at reference_block_price; less is refused)')
    .option('--verifiers <n>', 'verdicts the task pays for', v => Number(v))
    .option('--challenge-window <blocks>', 'blocks after the proof commitment for verdicts and disputes (default: 90, or the chain\'s minimum for the task when more; less is refused)', v => Number(v))
    .option('--solve-timeout <blocks>', 'blocks the selected solver has to commit', v => Number(v))
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (
    o: {
      task: string
      dataDir?: string
      json?: boolean
      solverReward?: string
      verifierReward?: string
      verifiers?: number
      challengeWindow?: number
      solveTimeout?: number
    }
  ) => {
    let prog: unknown
    try { prog = JSON.parse(await readFile(o.task, 'utf8')) } catch (err) { throw new CliError(`cannot read the task file ${o.task}: ${(err as Error).message}`, 2) }
    // refused before any peer is contacted: a task the chain cannot adjudicate is refused there too
    let adm
    try { adm = admissibility(validateProgram(prog), supportsElement) } catch (err) { throw new CliError(`invalid task program ${o.task}: ${(err as Error).message}`, 2) }
    if (!adm.ok) throw new CliError(`task refused: ${adm.reason}`, 2)
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      // refused before "submitting…" is said: a peer without the role would only refuse after it
      const { roles } = await c.get<{ roles: string[] }>('/v1/roles')
      if (!roles.includes('submitter')) throw new CliError('this peer does not have the submitter role; add it with "proofswarm roles add submitter"', 2)
      const unit = (u: string | undefined, flag: string): string | undefined => {
        if (u == null) return undefined
        if (!/^\d+$/.test(u)) throw new CliError(`${flag} must be a whole number of units`, 2)
        return (BigInt(u) * 10n ** 12n).toString()
      }
      const economics = { solverReward: unit(o.solverReward, '--solver-reward'), verifierReward: unit(o.verifierReward, '--verifier-reward'), verifierCount: o.verifiers, challengeWindow: o.challengeWindow, solveTimeout: o.solveTimeout }
      process.stderr.write('submitting (commitments are computed first; this takes a few seconds)…\n')
      // the peer computes the commitments, publishes the shards and waits for the chain (it gives up after 10 minutes)
      const r = await c.post<{ taskId: number }>('/v1/submit', { program: prog, economics }, 610_000)
      if (o.json === true) printJson(r)
      else process.stdout.write(`task ${r.taskId} submitted; follow it with "proofswarm tasks"\n`)
    } catch (err) { throw err instanceof CliError ? err : new CliError((err as Error).message) }
  })
}
