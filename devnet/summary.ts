import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChainClient } from '../node/chain/client.js'
import { ControlClient } from '../node/control/client.js'
import type { CollectedResult } from '../actors/ports.js'
import { units, type PeerRef, type ScenarioWatcher } from './scenario.js'

// The devnet's final summary: the trained model as the submitter evaluated it,
// the time of each phase, the disputes and every peer's balance change,
// written to summary.json and printed.

export interface SummaryInput {
  dir: string
  json: boolean
  forcedError: boolean
  challengeWindow: number
  taskId: number
  success: boolean
  submitterDataDir: string
  peers: PeerRef[]
  observer: ChainClient
  watcher: ScenarioWatcher
  /** free + reserved of every peer before the task */
  balancesBefore: Map<string, bigint>
  dashboardUrl: string
  say: (msg: string, data?: Record<string, unknown>) => void
}

export async function summarize (a: SummaryInput): Promise<void> {
  // the trained model as the submitter evaluated it: test accuracy, or a text model's held-out loss and sample
  let collected: CollectedResult | undefined
  const accDeadline = Date.now() + 120_000
  while (collected == null && Date.now() < accDeadline) {
    const listed = await (await ControlClient.fromDataDir(a.submitterDataDir)).get<{ actors: Array<{ id: string, context: { results?: Record<string, CollectedResult>, error?: string } }> }>('/v1/actors')
    const r = listed.actors.find(x => x.id.startsWith('submitter'))?.context?.results?.[String(a.taskId)]
    if (r?.accuracy != null || r?.text != null) collected = r
    else await new Promise(resolve => setTimeout(resolve, 1000))
  }
  const accuracy = collected?.accuracy
  const text = collected?.text
  const t = a.watcher.times
  const span = (a?: number, b?: number): string => a != null && b != null ? `${((b - a) / 1000).toFixed(1)} s` : '-'
  const payouts: Array<{ name: string, delta: bigint }> = []
  for (const p of a.peers) {
    const b = await a.observer.balance(p.accountId); payouts.push({ name: p.name, delta: b.free + b.reserved - a.balancesBefore.get(p.accountId)! })
  }
  const summary = {
    taskId: a.taskId,
    success: a.success,
    testAccuracy: accuracy ?? null,
    ...(text != null ? { validationLoss: text.validationLoss, unigramBaseline: text.unigramBaseline, sample: text.sample } : {}),
    phases: {
      'submission → solver selected': span(t.submitted, t.solverSelected),
      'training + publishing → proof committed': span(t.solverSelected, t.proofCommitted),
      'verification → first verdict': span(t.proofCommitted, t.firstVerdict),
      dispute: span(t.disputeOpened, t.disputeResolved),
      'proof committed → settled': span(t.proofCommitted, t.settled),
      total: span(t.submitted, t.settled)
    },
    balances: payouts.map(p => ({ peer: p.name, change: units(p.delta) })),
    disputes: a.watcher.disputes
  }
  // the window is sized for this machine idle (docs/benchmarks.md, "Devnet timing"): on a busy one the whistleblower may not finish in it
  if (a.forcedError && a.watcher.disputes.length === 0 && a.success) a.say(`warning: the forced error was not caught within the challenge window of ${a.challengeWindow} blocks (a slow or busy machine?): the task settled without a dispute. Raise --challenge-window to see one.`)
  // written before it is announced, so whoever reads the announcement finds the file
  await writeFile(join(a.dir, 'summary.json'), JSON.stringify(summary, null, 2))
  if (a.json) a.say('summary', { summary })
  else {
    const lines = [
      '',
      '================ devnet summary ================',
      `task ${a.taskId}: ${a.success ? 'settled successfully' : 'FAILED (the solver was found cheating)'}`,
      ...(text != null
        ? [`held-out loss of the trained model: ${text.validationLoss.toFixed(3)} nats/token (perplexity ${Math.exp(text.validationLoss).toFixed(1)}); unigram baseline of the corpus ${text.unigramBaseline.toFixed(3)}`, `sample: ${JSON.stringify(text.sample)}`]
        : [`test accuracy of the trained model: ${accuracy != null ? (accuracy * 100).toFixed(2) + '%' : 'not available'}`]),
      'time per phase:', ...Object.entries(summary.phases).map(([k, v]) => `  ${k.padEnd(42)} ${v}`),
      'disputes:', ...(a.watcher.disputes.length === 0 ? ['  none'] : a.watcher.disputes.map(d => `  #${d.disputeId}: ${d.winner} beat ${d.loser} (${d.how}), ${d.forcedError ? 'forced error: no slash (its jackpot, out of the solver reward, shared by the drawn verifiers whose sample held it, or else to the treasury)' : `slashed ${d.slashed}`}`)),
      'balance changes (free + reserved, units):', ...payouts.map(p => `  ${p.name.padEnd(24)} ${units(p.delta)}`),
      `dashboard: ${a.dashboardUrl}`,
      '================================================'
    ]
    process.stdout.write(lines.join('\n') + '\n')
  }
}
