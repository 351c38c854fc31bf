import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

interface TaskRow {
  taskId: number
  chain: null | {
    phase: string
    solver: string | null
    steps: number
    proofRoot: string
    verdicts: Array<{ verifier: string, accept: boolean }>
    openDisputes: number
    escrow: string
    deadline: number
    challengeEnd: number
  }
  gossip: null | { chain?: { TaskSettled?: { success: boolean, solverPaid: unknown, verifiersPaid: unknown, refunded: unknown } }, proof?: { solver: string } }
  /** the chain's best block when asked (null without a chain) */
  head?: number | null
  /** shard fetches for this task that failed on this peer */
  failedFetches?: number
}

/** The peer's job scheduler (/v1/jobs): what runs and waits here. */
export interface JobsView {
  limits: { maxJobs: number, maxMemory: number }
  memoryInUse: number
  running: Array<{ taskId: number, kind: string, memory: number, estimateMs: number, startedAt?: number }>
  queued: Array<{ taskId: number, kind: string, memory: number, estimateMs: number, queuedAt: number }>
  refused: Array<{ at: string, taskId: number, kind: string, reason: string }>
}

/** This peer's jobs of a task: "train running 12 s", "verify queued (2nd) 5 s" */
export function jobsOf (v: JobsView | undefined, taskId: number, now = Date.now()): string[] {
  if (v == null) return []
  const secs = (t: number | undefined): string => `${Math.max(0, Math.round((now - (t ?? now)) / 1000))} s`
  return [
    ...v.running.filter(j => j.taskId === taskId).map(j => `${j.kind} running ${secs(j.startedAt)}`),
    ...v.queued.flatMap((j, i) => j.taskId === taskId ? [`${j.kind} queued (#${i + 1} in line) ${secs(j.queuedAt)}`] : []),
    ...v.refused.filter(j => j.taskId === taskId).map(j => `${j.kind} ${j.kind === 'train' ? 'handed back' : 'dropped'}: ${j.reason}`)
  ]
}

/** What the task waits for, and how many blocks are left of it. */
export function countdown (t: NonNullable<TaskRow['chain']>, head: number | null | undefined): string {
  if (head == null) return ''
  if (t.phase === 'Solving') return `  solve deadline in ${Math.max(0, t.deadline - head)} blocks`
  // no solver yet (none free, or too little verifier stake to answer for the reward): it expires, refunded
  if (t.phase === 'Unassigned') return `  no solver yet: expires in ${Math.max(0, t.deadline - head)} blocks (escrow refunded)`
  if (t.phase === 'Verifying') {
    const left = t.challengeEnd - head
    return left >= 0 ? `  challenge window: ${left} blocks left` : `  challenge window over ${-left} blocks ago${t.openDisputes > 0 ? ' (waiting for the open disputes)' : ''}`
  }
  return ''
}

const short = (s: string | null | undefined): string => s == null ? '-' : s.length > 14 ? `${s.slice(0, 8)}…${s.slice(-4)}` : s
const units = (planck: unknown): string => planck == null ? '-' : (Number(BigInt(String(planck)) / 10n ** 9n) / 1000).toString()

// Tasks this peer knows of, with their phase on chain, solver, verdicts and payouts.
export function register (program: Command): void {
  const cmd = program.command('tasks').description('list tasks with their phase, solver, verdicts and payouts')
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (o: { dataDir?: string, json?: boolean }) => {
    let rows: TaskRow[]
    let jobs: JobsView | undefined
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      rows = await c.get<TaskRow[]>('/v1/tasks')
      // a peer without a chain schedules no jobs
      jobs = await c.get<JobsView>('/v1/jobs').catch(() => undefined)
    } catch (err) { throw new CliError((err as Error).message) }
    if (o.json === true) { printJson(rows.map(r => ({ ...r, jobs: jobsOf(jobs, r.taskId) }))); return }
    if (rows.length === 0) { process.stdout.write('no tasks known to this peer\n'); return }
    for (const r of rows) {
      const t = r.chain
      const settled = r.gossip?.chain?.TaskSettled
      const verdicts = t?.verdicts.map(v => `${short(v.verifier)}:${v.accept ? 'accept' : 'reject'}`).join(' ') ?? ''
      process.stdout.write(`task ${r.taskId}  phase=${t?.phase ?? '?'}  solver=${short(t?.solver)}  steps=${t?.steps ?? '?'}  disputes=${t?.openDisputes ?? 0}${t != null ? countdown(t, r.head) : ''}\n`)
      for (const j of jobsOf(jobs, r.taskId)) process.stdout.write(`  this peer: ${j}\n`)
      if ((r.failedFetches ?? 0) > 0) process.stdout.write(`  failed fetches on this peer: ${r.failedFetches} (see "proofswarm status")\n`)
      if (verdicts !== '') process.stdout.write(`  verdicts: ${verdicts}\n`)
      if (settled != null) process.stdout.write(`  settled: success=${settled.success} solver paid ${units(settled.solverPaid)}, verifiers paid ${units(settled.verifiersPaid)}, refunded ${units(settled.refunded)} (units)\n`)
    }
  })
}
