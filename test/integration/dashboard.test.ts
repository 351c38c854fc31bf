/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { createServer } from 'node:net'
import type { Page } from 'playwright-core'
import { startDashboard, type Dashboard } from '../../devnet/dashboard/server.js'
import { ChainClient, ROLE_SOLVER, ROLE_VERIFIER, ROLE_WHISTLEBLOWER } from '../../node/chain/client.js'
import { chartSeries, openDashboard, sel, waitDisputeVerdict, waitTaskPhase, type DashboardPage } from '../helpers/dashboard-page.js'
import { hexToU8a } from '@polkadot/util'
import { encodeSigned } from '../../protocols/dispute/index.js'
import { h32, signed } from '../helpers/dispute-msgs.js'
import { clientSample } from '../helpers/verdict-sample.js'
import { taskProgram } from '../helpers/program.js'
import { testPeer } from '../helpers/peer-key.js'
import type { PrivateKey } from '@libp2p/interface'
import { loadOrCreateIdentity } from '../../node/identity.js'
import { openPeerDb, sublevel } from '../../node/storage/db.js'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// The devnet dashboard in real headless Chromium: a small real swarm
// (bootstrap + 2 peers as separate processes), the dashboard server over
// their control APIs, and the page showing peers, roles, live statecharts
// and a role switch made with the CLI.

let dir: { path: string, cleanup: () => Promise<void> }
const procs: Proc[] = []
let dash: Dashboard
let browser: DashboardPage
let page: Page
let chainPort: number
const chainClients: ChainClient[] = []
const dataDir = (name: string): string => join(dir.path, name)
const peerKeys = new Map<string, PrivateKey>()

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)) })
  })
}

beforeAll(async () => {
  dir = await tempDir('ps-dashboard-')
  const boot = startCli(['bootstrap', '--data-dir', dataDir('bootstrap'), '--listen', '/ip4/127.0.0.1/tcp/0', '--json'])
  procs.push(boot)
  await waitForOutput(boot, hasJson, 20_000, 'bootstrap ready')
  const addr: string = firstJson(boot.stdout()).multiaddrs[0]
  const peers = [['peer1', 'solver'], ['peer2', 'submitter,verifier']]
  for (const [name, roles] of peers) {
    // the peer's identity made beforehand by the node's own code, so the test can sign its chain binding
    const db = await openPeerDb(dataDir(name))
    peerKeys.set(name, (await loadOrCreateIdentity(sublevel(db, 'meta'))).privateKey)
    await db.close()
    procs.push(startCli(['join', '--bootstrap', addr, '--roles', roles, '--data-dir', dataDir(name), '--listen', '/ip4/127.0.0.1/tcp/0', '--json']))
  }
  await Promise.all(procs.slice(1).map(async (p, i) => await waitForOutput(p, hasJson, 20_000, `${peers[i][0]} ready`)))
  // the chain starts later on this port: until then the chain panel must say so, not break the page
  chainPort = await freePort()
  dash = await startDashboard({
    peers: [{ name: 'bootstrap', dataDir: dataDir('bootstrap'), role: 'bootstrap' }, ...peers.map(([name, role]) => ({ name, dataDir: dataDir(name), role }))],
    chainUrl: `ws://127.0.0.1:${chainPort}`,
    pollMs: 500
  })
  browser = await openDashboard(dash.url, dir.path)
  page = browser.page
})

afterAll(async () => {
  for (const c of chainClients) await c.disconnect().catch(() => {})
  await browser?.close()
  await dash?.close()
  await Promise.all(procs.map(async p => await stopProc(p)))
  killAll()
  await dir?.cleanup()
})

const roleBadge = sel.peerRole
const actorCard = sel.actorCard

describe('devnet dashboard in headless Chromium', () => {
  it('serves the page and JSON state; refuses foreign Host headers and unknown paths', async () => {
    const state = await (await fetch(dash.url + 'api/state')).json() as { peers: Array<{ name: string }> }
    expect(state.peers.map(p => p.name)).toEqual(['bootstrap', 'peer1', 'peer2'])
    const machines = await (await fetch(dash.url + 'api/machines')).json() as Record<string, { initial: string, states: Array<{ path: string }> }>
    expect(Object.keys(machines).sort()).toEqual(['solver', 'submitter', 'supervisor', 'verifier', 'whistleblower'])
    // the solver runs two regions side by side: work (training) and disputes
    expect(machines.solver.initial).toBe('active')
    expect(machines.solver.states.map(s => s.path)).toEqual(expect.arrayContaining(['active.work.training', 'active.disputes.defending']))
    expect(machines.verifier.initial).toBe('idle')
    expect((await fetch(dash.url + 'nope')).status).toBe(404)
    expect((await fetch(dash.url + 'api/traces?limit=lots')).status).toBe(400)
    expect((await fetch(dash.url + 'api/state', { method: 'POST', body: '{}' })).status).toBe(405)
    // DNS rebinding: a page on another origin resolving to 127.0.0.1 sends its own Host
    const { request } = await import('node:http')
    const status = await new Promise<number>((resolve, reject) => {
      request(dash.url + 'api/state', { headers: { host: 'evil.example:80' } }, res => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject).end()
    })
    expect(status).toBe(403)
  })

  it('shows every peer with its roles, connections and live status', async () => {
    await page.waitForSelector(roleBadge('peer1', 'solver'))
    await page.waitForSelector(roleBadge('peer2', 'submitter'))
    await page.waitForSelector(roleBadge('peer2', 'verifier'))
    await page.waitForSelector('#peers tr[data-peer="bootstrap"] [data-role="bootstrap"]')
    expect(await page.locator(roleBadge('peer1', 'verifier')).count()).toBe(0)
    // every peer sees the two others
    await page.waitForFunction(() => [...document.querySelectorAll('#peers [data-testid="connected-count"]')].every(td => Number(td.textContent) >= 2))
    expect(await page.locator('#peers tr[data-peer] .pill.ok').count()).toBe(3)
    // no chain behind the URL: a clear state, the rest of the page works
    await page.waitForSelector('#chain-status.down')
    expect(await page.textContent('#chain')).toContain('chain not connected')
  })

  it('draws each actor\'s statechart with its current state highlighted', async () => {
    for (const [peer, role] of [['peer1', 'solver'], ['peer2', 'submitter'], ['peer2', 'verifier'], ['peer1', 'supervisor']]) {
      const card = page.locator(actorCard(peer, role))
      await card.waitFor()
      const current = card.locator('svg.chart g.state.current')
      const want = role === 'supervisor' ? ['running'] : role === 'solver' ? ['active', 'active.work', 'active.work.idle', 'active.disputes', 'active.disputes.idle'] : ['idle']
      expect((await current.evaluateAll(gs => gs.map(g => g.getAttribute('data-state')))).sort()).toEqual([...want].sort())
      // the chart is the machine's: all its states are boxes, transitions are edges
      expect(await card.locator('svg.chart g.state').count()).toBeGreaterThanOrEqual(role === 'supervisor' ? 2 : 4)
    }
    const solverStates = await page.locator(`${actorCard('peer1', 'solver')} svg g.state`).evaluateAll(gs => gs.map(g => g.getAttribute('data-state')))
    expect(solverStates).toEqual(expect.arrayContaining(['active.work.idle', 'active.work.training', 'active.work.committing', 'active.disputes.defending', 'retired']))
    expect(await page.locator(`${actorCard('peer1', 'solver')} svg g.edge`).count()).toBeGreaterThanOrEqual(7)
    // the bootstrap peer runs a supervisor without roles
    expect(await page.textContent(`${actorCard('bootstrap', 'supervisor')} .ctx`)).toContain('roles: (none)')
    expect(await page.locator('.actor[data-peer="bootstrap"]').count()).toBe(1)
    // the timeline holds the actors' spawn and init entries from every peer
    await page.waitForSelector('#timeline tbody tr[data-actor^="solver#"]')
  })

  it('shows a role switch made with the CLI live, without reloading', async () => {
    const added = await runCli(['roles', 'add', 'verifier', '--data-dir', dataDir('peer1'), '--json'])
    expect(added.code, added.stderr).toBe(0)
    await page.waitForSelector(roleBadge('peer1', 'verifier'))
    const card = page.locator(actorCard('peer1', 'verifier'))
    await card.waitFor()
    await card.locator('svg g.state.current[data-state="idle"]').waitFor()
    // the supervisor's roles.add shows up in the timeline
    await page.waitForSelector('#timeline tbody tr[data-actor="supervisor"] td.ev:text-is("roles.add")')
    // removing the idle solver retires its actor at once: its card goes away, its badge too
    const removed = await runCli(['roles', 'remove', 'solver', '--data-dir', dataDir('peer1'), '--json'])
    expect(removed.code, removed.stderr).toBe(0)
    await page.locator(actorCard('peer1', 'solver')).waitFor({ state: 'detached' })
    await page.locator(roleBadge('peer1', 'solver')).waitFor({ state: 'detached' })
    await page.waitForSelector('#timeline tbody tr.stopped[data-actor^="solver#"]')
  })

  it('connects to a chain started later and shows a task through a dispute to settlement, with balances and stakes', async () => {
    const chain = startCli(['chain', '--port', String(chainPort), '--instant-seal', '--data-dir', dataDir('chain'), '--json', '--log-level', 'warn'])
    procs.push(chain)
    await waitForOutput(chain, hasJson, 20_000, 'chain ready')
    const url: string = firstJson(chain.stdout()).url
    const [alice, bob, dave, eve] = await Promise.all(['Alice', 'Bob', 'Dave', 'Eve'].map(async n => await ChainClient.connect({ url, signer: `//${n}` })))
    chainClients.push(alice, bob, dave, eve)
    // the dashboard reconnects by itself
    await page.waitForSelector('#chain-status.connected', { timeout: 20_000 })
    await page.waitForSelector('#chain tr[data-account="Alice"]')

    const UNIT = 10n ** 12n
    const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)
    const P1 = taskProgram({ steps: 8, checkpointEvery: 4 })
    const advance = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await alice.api.rpc.engine.createBlock(true, true) }
    const peerIds = dash.aggregator.state().peers.map(p => p.status?.peerId)
    // the real peers' libp2p ids are bound to chain accounts: the peer table shows account and stake
    const signAs = (name: string) => async (m: Uint8Array): Promise<Uint8Array> => await peerKeys.get(name)!.sign(m)
    await bob.registerNode(peerIds[1]!, ROLE_SOLVER, 2000n * UNIT, signAs('peer1'))
    await dave.registerNode(peerIds[2]!, ROLE_VERIFIER, 1500n * UNIT, signAs('peer2'))
    const eveKey = testPeer('EveWhistleblower')
    // a whistleblower only: Dave is the one verifier the chain can draw
    await eve.registerNode(eveKey.peerId, ROLE_WHISTLEBLOWER, 1200n * UNIT, eveKey.sign)
    await page.waitForSelector('#peers tr[data-peer="peer1"] td:text-is("Bob · 2,000.00")')
    await page.waitForSelector('#peers tr[data-peer="peer2"] td:text-is("Dave · 1,500.00")')

    const id = await alice.submitTask({
      programHash: P1.programHash, program: P1.bytes, datasetRoot: H(2), skeletonRoot: H(3), steps: 8,
      checkpointEvery: 4, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: 100n * UNIT,
      verifierCount: 1, challengeWindow: 40, solveTimeout: 50
    })
    await advance(1)
    const task = `#tasks tr[data-task="${id}"]`
    await waitTaskPhase(page, id, 'Solving')
    expect(await page.textContent(task)).toContain('Bob')
    const { challengeEnd } = await bob.commitProof(id, { proofRoot: H(9), finalStateRoot: H(8), stepCount: 8, checkpoints: ['bafyckpt0', 'bafyckpt1'] })
    await advance(1)
    const sample = await clientSample(dave, id)
    await dave.submitVerdict(id, true, sample)
    await waitTaskPhase(page, id, 'Verifying')
    await page.waitForSelector(`${task} td:text-is("1 accept / 0 reject")`)

    // a dispute: Eve challenges Bob's proof and never plays; Bob forces his commit on chain, Eve lets it expire
    const did = await eve.openDispute(id, bob.accountId, 'SolverProof', 3)
    const commit = signed('Bob', { genesis: hexToU8a(bob.genesisHash), taskId: Number(id), disputeId: Number(did) }, { t: 'commit', d: Number(did), step: 3, traceRoot: h32(7), depth: 3 })
    const { due } = await bob.forceMove(did, new Uint8Array(), encodeSigned(commit))
    const dispute = `#disputes [data-dispute="${did}"]`
    await page.waitForSelector(sel.disputeStatus(did, 'Open'))
    // the sample map: the steps Dave's verdict on chain lists (Dave is peer2's account), the checkpoints, the disputed step
    // (drawn by Chart.js: the series are read from the library's chart on the canvas)
    const pics = `[data-task-pictures="${id}"]`
    const map = `${pics} canvas[data-testid="sample-map"]`
    await page.waitForFunction(s => (window as any).Chart.getChart(document.querySelector(s))?.data.datasets.some((d: any) => d.label === 'disputed step 4'), map)
    const series = await chartSeries(page, map)
    expect(sample.length).toBeGreaterThan(0)
    const checkedByDave = series.find(d => d.label === 'peer2 accepts')!
    expect(checkedByDave.points.map(p => p.x - 0.5).sort((a, b) => a - b)).toEqual([...sample].sort((a, b) => a - b))
    expect(series.find(d => d.label.startsWith('checkpoints'))!.points.map(p => p.x)).toEqual([0, 4, 8])
    expect(series.find(d => d.label === 'disputed step 4')!.points.every(p => p.x === 3.5)).toBe(true)
    // nobody trained this task: an empty curve, said so
    expect(await page.getAttribute(`${pics} canvas[data-testid="loss-curve"]`, 'data-points')).toBe('0')
    expect((await chartSeries(page, `${pics} canvas[data-testid="loss-curve"]`))[0].points).toHaveLength(0)
    expect(await page.textContent(`${pics} [data-testid="loss-curve-box"]`)).toContain('no loss reported yet')
    // the bisection live, while the dispute is open: Bob's commit reached the chain (forced), so the
    // narrowing shows its first move (the whole tape of the step: 2^3 ops) before anyone reports the game
    const live = `${dispute} [data-testid="bisection-live"] canvas[data-testid="bisection"]`
    await page.waitForSelector(`${live}[data-rounds="1"]`)
    const moves = await chartSeries(page, live)
    expect(moves.find(d => d.label === 'still in dispute')!.points).toEqual([{ x: 0, y: 1 }])
    expect(await page.textContent(`${dispute} [data-testid="bisection-live"] figcaption`)).toContain('as the chain (moves forced on chain) recorded them')
    // the chain's DisputeInfo: one message on chain, the challenger owes the next one
    await page.waitForSelector(`${dispute} .clocks:has-text("messages on chain 1 · forced: Challenger owes message 1 by block ${due}")`)
    await advance(due - await alice.bestNumber())
    await dave.claimTimeout(did)
    await page.waitForSelector(sel.disputeStatus(did, 'DefenderWon'))
    // the status comes from the dispute's storage; who won and how from the DisputeResolved event, which may land a poll later
    await page.waitForSelector(`${sel.disputeVerdict(did)}:has-text("winner Bob")`)
    const verdict = await waitDisputeVerdict(page, did)
    expect(verdict).toContain('DefenderWon')
    expect(verdict).toContain('winner Bob')
    expect(verdict).toContain('Timeout')
    const rounds = await page.locator(`${dispute} ol li`).allTextContents()
    expect(rounds.map(r => r.split(': ')[1]?.split(' ')[0])).toEqual(['DisputeOpened', 'MoveForced', 'DisputeResolved'])

    await advance(Math.max(0, challengeEnd - await alice.bestNumber() + 1))
    await waitTaskPhase(page, id, 'Settled')
    // balances as the chain has them after settlement (Bob: dev funds - stake + reward + half of Eve's bond)
    const bobFree = BigInt((await bob.balance()).free)
    await page.waitForFunction(([sel, want]) => document.querySelector(sel)?.textContent?.replace(/,/g, '').startsWith(want) === true,
      ['#chain tr[data-account="Bob"] td:nth-child(3)', String(bobFree / UNIT)] as const)
    // stakes and balances over time: a sample per block read, Bob's stake registered (2,000) and his free balance moving
    const held = await chartSeries(page, 'canvas[data-testid="balances-held"]')
    const bobStake = held.find(d => d.label === 'Bob stake')!
    expect(bobStake.points.length).toBeGreaterThanOrEqual(3)
    expect(bobStake.points[bobStake.points.length - 1].y).toBe(2000)
    expect(held.find(d => d.label === 'Dave stake')!.points.at(-1)!.y).toBe(1500)
    const free = await chartSeries(page, 'canvas[data-testid="balances-free"]')
    const bobFreeSeries = free.find(d => d.label === 'Bob')!
    expect(bobFreeSeries.points.length).toBe(bobStake.points.length)
    expect(new Set(bobFreeSeries.points.map(p => p.y)).size).toBeGreaterThan(1)
    expect(bobFreeSeries.points.map(p => p.x)).toEqual([...bobFreeSeries.points.map(p => p.x)].sort((a, b) => a - b))
    // docs/dashboard.png comes from the devnet scenario test (a real run); this one stays in the temp dir
    await page.screenshot({ path: join(dir.path, 'dashboard.png'), fullPage: true })
  })

  it('serves one peer\'s own view: proofswarm dashboard --data-dir', async () => {
    const bad = await runCli(['dashboard', '--data-dir', dataDir('peer1'), '--chain', 'http://nope'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--chain must be a ws:// or wss:// URL')
    const missing = await runCli(['dashboard', '--data-dir', dataDir('nobody')])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain('no running peer found')
    const own = startCli(['dashboard', '--data-dir', dataDir('peer1'), '--json'])
    procs.push(own)
    await waitForOutput(own, hasJson, 20_000, 'dashboard url')
    const url: string = firstJson(own.stdout()).url
    expect((await (await fetch(url)).text())).toContain('<title>proofswarm')
    const state = await waitFor(async () => {
      const s = await (await fetch(url + 'api/state')).json() as { peers: Array<{ name: string, connected: boolean, roles?: { roles: string[] } }>, chain: { state: string } }
      return s.peers[0]?.connected ? s : undefined
    }, 10_000, 'peer1 in its own dashboard')
    expect(state.peers.map(p => [p.name, p.roles?.roles])).toEqual([['peer1', ['verifier']]])
    expect(state.chain.state).toBe('none')
    expect(await stopProc(own)).toBe(0)
  })

  it('marks a peer that stops as not connected', async () => {
    const peer2 = procs[2] // bootstrap, peer1, peer2 were started first
    await stopProc(peer2)
    await page.waitForSelector('#peers tr[data-peer="peer2"].offline .pill.down')
    expect(await page.textContent('#summary')).toContain('2/3 peers up')
  })
})
