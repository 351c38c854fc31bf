import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chartSeries, openDashboard, sel, waitDisputeVerdict, waitTaskPhase, type DashboardPage } from '../helpers/dashboard-page.js'
import { tempDir } from '../helpers/procs.js'
import { checkpointStepsOf } from '../../protocols/verification/checkpoint-steps.js'

// The README's main command, end to end: `node dist/devnet/cli.js` (what `npm
// run devnet` runs after building) with a short task on Fashion-MNIST and a
// Truebit forced error: chain, bootstrap, 6 peers, dashboard; the task runs
// to settlement through a dispute, and the dashboard shows it in Chromium.

let dir: { path: string, cleanup: () => Promise<void> }
let devnet: ChildProcess
let out = ''
const lines: any[] = []
let dash: DashboardPage | undefined

function waitLine (pred: (l: any) => boolean, timeoutMs: number, what: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => { const l = lines.find(pred); if (l != null) { clearInterval(t); clearTimeout(to); resolve(l) } return l != null }
    const t = setInterval(check, 200)
    const to = setTimeout(() => { clearInterval(t); reject(new Error(`timed out waiting for ${what}; devnet output:\n${out.slice(-4000)}`)) }, timeoutMs)
    check()
  })
}

beforeAll(async () => {
  dir = await tempDir('proofswarm-devnet-')
  devnet = spawn(process.execPath, [resolve('dist/devnet/cli.js'), '--dir', join(dir.path, 'devnet'), '--json', '--steps', '120', '--block-time', '400', '--challenge-window', '120'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let partial = ''
  devnet.stdout!.on('data', (d: Buffer) => {
    out += d.toString()
    partial += d.toString()
    const parts = partial.split('\n')
    partial = parts.pop() ?? ''
    for (const p of parts) { try { lines.push(JSON.parse(p)) } catch { /* not a JSON line */ } }
  })
  devnet.stderr!.on('data', (d: Buffer) => { out += d.toString() })
}, 30_000)

afterAll(async () => {
  await dash?.close()
  if (devnet != null && devnet.exitCode == null) {
    devnet.kill('SIGTERM')
    await new Promise(resolve => { const t = setTimeout(() => { devnet.kill('SIGKILL'); resolve(null) }, 20_000); devnet.once('exit', () => { clearTimeout(t); resolve(null) }) })
  }
  // a devnet killed before it stopped its processes leaves them running (slowing every later test of the run): kill them
  const state = dir != null ? join(dir.path, 'devnet', 'devnet.json') : ''
  if (existsSync(state)) for (const p of JSON.parse(readFileSync(state, 'utf8')).processes as Array<{ pid: number }>) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL')
  await dir?.cleanup()
})

function alive (pid: number): boolean { try { process.kill(pid, 0); return true } catch { return false } }

async function runNode (args: string[], script = 'dist/devnet/cli.js'): Promise<{ code: number | null, stdout: string }> {
  const c = spawn(process.execPath, [resolve(script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  c.stdout!.on('data', (d: Buffer) => { stdout += d.toString() })
  const code = await new Promise<number | null>(resolve => c.on('exit', resolve))
  return { code, stdout }
}

describe('npm run devnet', () => {
  it('starts the chain, the bootstrap peer, 6 peers and the dashboard', async () => {
    const d = await waitLine(l => typeof l.dashboard === 'string', 90_000, 'the dashboard URL')
    expect(lines.some(l => /dev chain ready: ws:\/\/127\.0\.0\.1:\d+/.test(l.msg))).toBe(true)
    expect(lines.filter(l => typeof l.peerId === 'string' && typeof l.peer === 'string')).toHaveLength(6)
    dash = await openDashboard(d.dashboard, dir.path)
    for (const [peer, role] of [['peer1-submitter', 'submitter'], ['peer2-solver', 'solver'], ['peer4-verifier', 'verifier'], ['peer6-whistleblower', 'whistleblower']]) {
      await dash.page.waitForSelector(sel.peerRole(peer, role), { timeout: 30_000 })
    }
  }, 120_000)

  it('records its processes for status/down', () => {
    const state = JSON.parse(readFileSync(join(dir.path, 'devnet', 'devnet.json'), 'utf8'))
    expect(state.processes.map((p: any) => p.name)).toEqual(expect.arrayContaining(['chain', 'bootstrap', 'peer1-submitter', 'peer6-whistleblower']))
    writeFileSync(join(dir.path, 'pids.json'), JSON.stringify(state.processes.map((p: any) => p.pid)))
  })

  it('runs the task through a dispute to settlement, with progress, and prints a summary', async () => {
    await waitLine(l => /training step \d+\/120/.test(l.msg ?? ''), 120_000, 'training progress')
    await waitLine(l => l.event === 'ProofCommitted', 180_000, 'the proof commitment')
    const resolved = await waitLine(l => l.event === 'DisputeResolved', 300_000, 'a dispute resolved on chain')
    expect(resolved.msg).toMatch(/dispute \d+ resolved/)
    const s = (await waitLine(l => l.msg === 'summary', 300_000, 'the summary')).summary
    expect(s.disputes.length).toBeGreaterThanOrEqual(1)
    // the whistleblower replays every step (not a verifier's sample): it always finds the forced error
    // on a failure the devnet's own output says why (its phases, verdicts, disputes and deadlines)
    const tail = (): string => `devnet output:\n${out.slice(-8000)}`
    expect(lines.some(l => l.event === 'DisputeOpened' && /opened by \S*whistleblower/.test(l.msg ?? '')), `the whistleblower disputed the forced error; ${tail()}`).toBe(true)
    // the solver's forced error (a marked leaf after an honest step): a state claim, revealed with the leaf's path, excused
    expect(lines.some(l => l.event === 'Adjudicated' && /\(state claim\)/.test(l.msg ?? ''))).toBe(true)
    expect(lines.some(l => l.event === 'ForcedErrorRevealed')).toBe(true)
    expect(s.disputes.some((d: { forcedError: boolean }) => d.forcedError)).toBe(true)
    expect(typeof s.phases.total).toBe('string')
    expect(s.balances).toHaveLength(6)
    // an honest solver with a forced error is paid its reward less the jackpot it funds; the submitter pays
    const change = (b: { change: string }): number => parseFloat(b.change.replace(/,/g, ''))
    expect(s.success, tail()).toBe(true)
    expect(Math.max(...s.balances.filter((b: any) => /solver/.test(b.peer)).map(change))).toBeGreaterThan(0)
    expect(change(s.balances.find((b: any) => /submitter/.test(b.peer)))).toBeLessThan(0)
    expect(existsSync(join(dir.path, 'devnet', 'summary.json'))).toBe(true)
    expect(JSON.parse(readFileSync(join(dir.path, 'devnet', 'summary.json'), 'utf8')).taskId).toBe(s.taskId)
  }, 600_000)

  it('the dashboard shows the task settled and the dispute verdict; screenshot written', async () => {
    const taskId = lines.find(l => l.msg === 'summary').summary.taskId
    await waitTaskPhase(dash!.page, taskId, lines.find(l => l.msg === 'summary').summary.success === true ? 'Settled' : 'Failed', 30_000)
    const verdict = await waitDisputeVerdict(dash!.page, undefined, 30_000)
    expect(verdict).toMatch(/ChallengerWon|DefenderWon/)
    // the pictures, drawn by Chart.js from what the peers and the chain report (the series read from the
    // library's chart on each canvas, compared with the dashboard's own state)
    const page = dash!.page
    const state = await (await fetch(new URL('/api/state', page.url()))).json()
    const task = state.tasks.find((t: any) => t.id === String(taskId))
    const pics = `[data-task-pictures="${taskId}"]`
    // the solver's loss curve: one point per progress report, falling from the first to the last; the test accuracy on its own axis
    const points = task.pictures.curve.points as Array<[number, number]>
    expect(points.length).toBeGreaterThanOrEqual(3)
    expect(points[points.length - 1][1]).toBeLessThan(points[0][1])
    const accuracy = lines.find(l => l.msg === 'summary').summary.testAccuracy
    expect(typeof accuracy).toBe('number')
    await page.waitForFunction(s => (window as any).Chart.getChart(document.querySelector(s))?.data.datasets.some((d: any) => d.label.startsWith('test accuracy')), `${pics} canvas[data-testid="loss-curve"]`)
    const loss = await chartSeries(page, `${pics} canvas[data-testid="loss-curve"]`)
    expect(loss.find(d => d.label === 'training loss')!.points).toEqual(points.map(([x, y]) => ({ x, y })))
    expect(loss.find(d => d.label.startsWith('test accuracy'))!.points[0].y).toBeCloseTo(accuracy * 100, 6)
    // the sample map: a point per step each verdict on chain checked, the checkpoints, the disputed step
    // two verdicts (an accept lists its whole sample; a reject the steps up to the one it disputes)
    expect(task.pictures.samples.length).toBeGreaterThanOrEqual(2)
    for (const v of task.pictures.samples) expect(v.steps.length).toBeGreaterThanOrEqual(1)
    const map = await chartSeries(page, `${pics} canvas[data-testid="sample-map"]`)
    const verdictSeries = map.filter(d => / (accepts|rejects|void)$/.test(d.label))
    expect(verdictSeries).toHaveLength(task.pictures.samples.length)
    expect(verdictSeries.map(d => d.points.length)).toEqual(task.pictures.samples.map((v: any) => v.steps.length))
    expect(map.find(d => d.label.startsWith('checkpoints'))!.points).toHaveLength(checkpointStepsOf(task.pictures.steps, task.pictures.checkpointEvery).length)
    // the devnet's task commits a root every 8 steps (task new's default): the dispute names a segment,
    // drawn as the box of its steps, and the solver's (first) revealed forced error lies inside it
    // (a draw orders up to 4 forced steps: the dispute of that one, if several were disputed)
    const m = task.pictures.rootEvery
    expect(m).toBe(8)
    const disputed = state.disputes.filter((d: any) => d.chain != null)
    const dispute = disputed.find((d: any) => d.chain.disputedStep === Math.floor(task.pictures.forcedStep / m)) ?? disputed[0]
    const j = dispute.chain.disputedStep
    const first = j * m; const last = Math.min((j + 1) * m, task.pictures.steps) - 1
    const segmentBox = map.find(d => d.label === `disputed segment ${j}: steps ${first + 1}–${last + 1}`)!
    expect(segmentBox.points.map(p => p.x)).toEqual([first, first, last + 1, last + 1, first])
    expect(task.pictures.forcedStep).toBeGreaterThanOrEqual(first)
    expect(task.pictures.forcedStep).toBeLessThanOrEqual(last)
    expect(map.find(d => d.label === `forced error ${task.pictures.forcedStep + 1}`)!.points[0].x).toBe(task.pictures.forcedStep + 0.5)
    // the bisection as the challenger recorded it, one bar per answer of the defender, and the claim the chain ruled on.
    // A forced error changes only the committed post-state: both tapes agree, so the game ends at the
    // defender's commitment (the whole tape of the step) with a state claim
    const bis = `#disputes [data-dispute="${dispute.id}"] canvas[data-testid="bisection"]`
    await page.waitForSelector(bis, { timeout: 15_000 })
    const narrowing = (await (await fetch(new URL('/api/state', page.url()))).json()).disputes.find((d: any) => d.id === dispute.id).narrowing as Array<{ stage: string, lo: number, hi: number, of: number }>
    const bars = (await chartSeries(page, bis)).find(d => d.label === 'still in dispute')!.points
    expect(bars).toEqual(narrowing.map(n => ({ x: n.lo / n.of, y: n.hi / n.of })))
    expect(narrowing[0].stage).toBe('tape')
    expect(narrowing[0].lo).toBe(0)
    expect(narrowing[0].hi).toBe(narrowing[0].of)
    expect(await page.textContent(`#disputes [data-dispute="${dispute.id}"] [data-testid="bisection-claim"]`)).toMatch(/state claim — the @state entry hashes to/)
    // stakes and balances over time: every peer's account staked, the submitter's free balance fell by what it paid
    const held = await chartSeries(page, 'canvas[data-testid="balances-held"]')
    expect(held.filter(d => d.label.endsWith(' stake') && d.points.at(-1)!.y > 0).length).toBeGreaterThanOrEqual(5)
    const free = await chartSeries(page, 'canvas[data-testid="balances-free"]')
    expect(free.length).toBeGreaterThanOrEqual(5)
    expect(free[0].points.length).toBeGreaterThanOrEqual(10)
    await page.screenshot({ path: resolve('docs/dashboard.png'), fullPage: true })
  }, 90_000)

  it('devnet status reports it; devnet down stops every process cleanly', async () => {
    // through the installed CLI: proofswarm devnet status
    const st = await runNode(['devnet', 'status', '--json', '--dir', join(dir.path, 'devnet')], 'dist/node/cli/main.js')
    const status = JSON.parse(st.stdout)
    expect(status.running).toBe(true)
    expect(status.peers.filter((p: any) => p.up)).toHaveLength(7)
    const exited = new Promise<number | null>(resolve => { if (devnet.exitCode != null) resolve(devnet.exitCode); else devnet.once('exit', c => resolve(c)) })
    const down = await runNode(['down', '--dir', join(dir.path, 'devnet')])
    expect(down.code).toBe(0)
    expect(await exited).toBe(0)
    expect(existsSync(join(dir.path, 'devnet', 'devnet.json'))).toBe(false)
    const pids = JSON.parse(readFileSync(join(dir.path, 'pids.json'), 'utf8')) as number[]
    for (const pid of pids) expect(alive(pid), `process ${pid} still running`).toBe(false)
  }, 60_000)
})
