import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

// Opens the devnet dashboard in headless Debian Chromium (fresh profile in
// the given dir) and offers the waits other tests need: peers, task phases,
// dispute verdicts. Every wait is bounded by the page's default timeout.

export interface DashboardPage { browser: BrowserContext, page: Page, close: () => Promise<void> }

export async function openDashboard (url: string, profileDir: string, timeoutMs = 15_000): Promise<DashboardPage> {
  const browser = await chromium.launchPersistentContext(join(profileDir, 'chromium-profile'), {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1400, height: 1000 }
  })
  const page = browser.pages()[0] ?? await browser.newPage()
  page.setDefaultTimeout(timeoutMs)
  await page.goto(url)
  await page.waitForSelector('#live.live')
  return { browser, page, close: async () => { await browser.close().catch(() => {}) } }
}

export const sel = {
  peerRole: (peer: string, role: string): string => `#peers tr[data-peer="${peer}"] td.roles [data-role="${role}"]:not(.retiring)`,
  actorCard: (peer: string, actorIdPrefix: string): string => `.actor[data-peer="${peer}"][data-actor^="${actorIdPrefix}"]`,
  taskPhase: (taskId: string | number | bigint, phase: string): string => `#tasks tr[data-task="${taskId}"] [data-testid="task-phase"]:text-is("${phase}")`,
  disputeStatus: (disputeId: string | number | bigint, status: string): string => `#disputes [data-dispute="${disputeId}"] [data-testid="dispute-status"]:text-is("${status}")`,
  disputeVerdict: (disputeId: string | number | bigint): string => `#disputes [data-dispute="${disputeId}"] [data-testid="dispute-verdict"]`,
  anyVerdict: '#disputes [data-testid="dispute-verdict"]'
}

/** Waits until the task shows the phase (e.g. "Settled"). */
export async function waitTaskPhase (page: Page, taskId: string | number | bigint, phase: string, timeoutMs?: number): Promise<void> {
  await page.waitForSelector(sel.taskPhase(taskId, phase), { timeout: timeoutMs })
}

/** Waits for a dispute's verdict and returns its text ("verdict: DefenderWon (winner Bob, by Timeout, …)"). */
export async function waitDisputeVerdict (page: Page, disputeId?: string | number | bigint, timeoutMs?: number): Promise<string> {
  const s = disputeId != null ? sel.disputeVerdict(disputeId) : sel.anyVerdict
  await page.waitForSelector(s, { timeout: timeoutMs })
  return (await page.locator(s).first().textContent()) ?? ''
}

export interface ChartSeries { label: string, points: Array<{ x: number, y: number }> }

/** The series Chart.js draws on the canvas `selector` (read from the library's own chart instance). */
export async function chartSeries (page: Page, selector: string): Promise<ChartSeries[]> {
  return await page.locator(selector).first().evaluate(canvas => {
    const chart = (
      window as unknown as { Chart: { getChart: (c: unknown) => { data: { datasets: Array<{ label: string, data: unknown[] }> } } | undefined } }
    ).Chart.getChart(canvas)
    if (chart == null) throw new Error('no Chart.js chart on this canvas')
    return chart.data.datasets.map(
      d => ({ label: d.label, points: d.data.map(p => Array.isArray(p) ? { x: p[0] as number, y: p[1] as number } : p as { x: number, y: number }) })
    )
  })
}
