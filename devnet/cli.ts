#!/usr/bin/env node
import '../node/polyfill.js'
import { installProcessPolicy } from '../node/process-policy.js'
import { Command } from 'commander'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { ControlClient } from '../node/control/client.js'
import { joinHint } from '../node/cli/join-hint.js'
import { spawnCli, stopChild, type ChildHandle } from './processes.js'
import { startDashboard, type Dashboard } from './dashboard/server.js'
import { ScenarioWatcher, watchProgress, watchWindow, type PeerRef } from './scenario.js'
import { ProgressLine, type ProgressItem } from './progress.js'
import { alive, readState, removeState, writeState, type DevnetState } from './state-file.js'
import { DEFAULT_ROLES, checkOptions, type Opts } from './options.js'
import { down, status } from './status.js'
import { summarize } from './summary.js'
import { waitForSwarm } from './swarm.js'
import { prepareTask } from './task.js'
import { watchDisputes } from './dispute-progress.js'
import { DEFAULT_ROOT_EVERY } from '../protocols/pol/segments.js'

// `npm run devnet`: a whole network on one machine — the dev chain, a
// bootstrap peer and N peers, each a separate process with its own data dir
// and ports on 127.0.0.1 — then one real training task from submission to
// settlement, with progress, a dashboard and a final summary.

installProcessPolicy('devnet')

const program = new Command()
  .name('devnet')
  .description('run a proofswarm devnet on this machine: dev chain, bootstrap peer, N peers, one real task with a dispute')
  // options after "status"/"down" belong to them (both have their own --dir)
  .enablePositionalOptions()
  .option('--peers <n>', 'number of peers besides the bootstrap peer (roles cycle: submitter, solver, solver, verifier, verifier, whistleblower)', v => Number(v), 6)
  .option('--dir <dir>', 'devnet directory (data dirs, logs, devnet.json)', '.devnet')
  .option('--keep', 'keep the data dirs from a previous run instead of starting fresh')
  .option('--task <mlp|gpt|file>', 'the task to run: mlp (784-128-10 on Fashion-MNIST, the default), gpt (a small character-level GPT on Debian\'s fortunes-min), or a task program file (from "proofswarm task new")')
  .option('--steps <n>', 'training steps of a built-in task (mlp: 1000 ≈ 1 epoch of Fashion-MNIST at batch 64; gpt: 150)', v => Number(v))
  .option('--checkpoint-every <k>', 'checkpoint spacing of a built-in task; default: from what a checkpoint costs on this machine, erasure coding included (measured with the challenge window), else task new\'s default', v => Number(v))
  .option('--root-every <m>', `a built-in task commits its state root every m steps; a dispute narrows to an m-step segment first, then to one step in it (docs/disputes.md "Segments"). Default: task new's (${DEFAULT_ROOT_EVERY}; 1, a root after every step, for fewer steps or a --checkpoint-every that ${DEFAULT_ROOT_EVERY} does not divide)`, v => Number(v))
  // docs/benchmarks.md, "Devnet timing": the window is measured on this machine (devnet/timing.ts);
  // faster blocks would save ~1 s and cost every peer's chain client CPU.
  .option('--block-time <ms>', 'dev chain block time', v => Number(v), 500)
  .option('--challenge-window <blocks>', 'blocks for verdicts and disputes after the proof is committed (the whistleblower replays the whole run in it); default: twice the whistleblower\'s path on this machine, measured by training the task\'s first steps before it is submitted', v => Number(v))
  .option('--dispute-clock <blocks>', 'blocks a party forced in a dispute has to answer on chain; generous on a busy machine', v => Number(v), 60)
  .option('--synthetic', 'train the default task on a generated dataset instead of Fashion-MNIST (which is installed when missing, as root)')
  .option('--no-forced-error', 'do not make the chain order a Truebit forced error (by default the task has one, so a dispute runs)')
  .option('--exit-when-settled', 'stop everything once the task has settled and the summary is printed')
  .option('--exit-after <seconds>', 'stop the devnet after this many seconds', v => Number(v))
  .option('--dashboard-port <port>', 'dashboard port on 127.0.0.1 (0 picks a free one)', v => Number(v), 0)
  .option('--json', 'print progress as JSON lines')
  .option('--public <ip>', 'let peers on other hosts join: the chain and every peer listen on all interfaces, and the devnet prints the join command for <ip> (this host\'s address as the others reach it)')

program.command('status')
  .description('show the running devnet: processes, chain, dashboard, task phase')
  .option('--dir <dir>', 'devnet directory', '.devnet')
  .option('--json', 'print JSON')
  .action(async (c: { dir: string, json?: boolean }) => { await status(resolve(c.dir), c.json === true); process.exit(0) })

program.command('down')
  .description('stop a running devnet (every process it started)')
  .option('--dir <dir>', 'devnet directory', '.devnet')
  .action(async (c: { dir: string }) => { await down(resolve(c.dir)); process.exit(0) })

program.action(async (o: Opts) => { await run(o) })
await program.parseAsync(process.argv)

async function run (o: Opts): Promise<void> {
  const dir = resolve(o.dir)
  checkOptions(o)
  const listenHost = o.public != null ? '0.0.0.0' : '127.0.0.1'
  const prev = readState(dir)
  if (prev != null && alive(prev.pid)) { process.stderr.write(`a devnet is already running in ${dir} (pid ${prev.pid}); stop it with "npm run devnet -- down" or use --dir\n`); process.exit(2) }
  if (o.keep !== true) await rm(dir, { recursive: true, force: true })
  const logDir = join(dir, 'logs')
  await mkdir(logDir, { recursive: true })
  const t0 = Date.now()

  const stamp = (): string => `[devnet +${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s]`
  // progress of the long waits: bars on a terminal, plain lines every few seconds otherwise (devnet/progress.ts)
  const progress = new ProgressLine(process.stdout)
  const say = (msg: string, data: Record<string, unknown> = {}): void => {
    if (o.json === true) process.stdout.write(JSON.stringify({ time: new Date().toISOString(), msg, ...data }, (_k, v) => typeof v === 'bigint' ? v.toString() : v) + '\n')
    else progress.log(`${stamp()} ${msg}`)
  }
  const showProgress = (key: string, item: ProgressItem | undefined, data: Record<string, unknown>): void => {
    if (o.json === true) { if (item != null) say(key === 'window' ? `${item.label}: ${item.text}` : `${key}: ${item.text}`, { ...data, ...(item.fraction != null ? { fraction: Number(item.fraction.toFixed(3)) } : {}) }); return }
    if (item == null) { progress.delete(key); return }
    if (progress.tty) progress.set(key, item)
    else progress.set(key, { ...item, label: `${stamp()} ${key === 'window' ? item.label : key}` })
  }

  const children: ChildHandle[] = []
  const state: DevnetState = { pid: process.pid, startedAt: new Date().toISOString(), dir, processes: [] }
  const save = (): void => { try { writeState(dir, state) } catch {} }
  let dashboard: Dashboard | undefined
  let observer: import('../node/chain/client.js').ChainClient | undefined
  const cleanups: Array<() => void> = []
  let stopping = false
  const shutdown = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true
      progress.clear()
      say('stopping every process…')
      for (const c of cleanups) c()
      await observer?.disconnect().catch(() => {})
      await dashboard?.close().catch(() => {})
      // peers first, then the bootstrap peer, the chain last
      await Promise.all(children.filter(c => c.name !== 'chain' && c.name !== 'bootstrap').map(async c => await stopChild(c)))
      await Promise.all(children.filter(c => c.name === 'bootstrap').map(async c => await stopChild(c)))
      await Promise.all(children.filter(c => c.name === 'chain').map(async c => await stopChild(c)))
      removeState(dir)
      say(o.keep === true ? `stopped; data kept in ${dir}` : `stopped; data dirs and logs in ${dir}`)
    }
    process.exit(code)
  }
  process.on('SIGINT', () => { void shutdown(0) })
  process.on('SIGTERM', () => { void shutdown(0) })
  const track = (h: ChildHandle, extra: Partial<DevnetState['processes'][number]> = {}): ChildHandle => {
    children.push(h)
    state.processes.push({ name: h.name, pid: h.child.pid ?? -1, logFile: h.logFile, ...extra })
    save()
    void h.exited.then(code => { if (!stopping) { say(`${h.name} exited unexpectedly (code ${code}); its log: ${h.logFile}`); void shutdown(1) } })
    return h
  }

  if (o.exitAfter != null) setTimeout(() => { say(`--exit-after ${o.exitAfter} s reached`); void shutdown(0) }, o.exitAfter * 1000).unref()
  try {
    // 1. the task program (checked first: a missing dataset is said loudly), its challenge window and checkpoint spacing
    const task = await prepareTask(o, dir, logDir, say, showProgress)
    const taskFile = task.file
    const challengeWindow = task.challengeWindow

    // 2. the dev chain
    const chainArgs = ['chain', '--json', '--host', listenHost, '--port', '0', '--data-dir', join(dir, 'chain'), '--block-time', String(o.blockTime), '--dispute-clock', String(o.disputeClock)]
    if (o.forcedError) chainArgs.push('--forced-error-ppm', '1000000')
    const chainH = track(spawnCli('chain', chainArgs, logDir), { dataDir: undefined })
    // with --public the chain prints one URL per interface; this host's own processes use loopback
    const chainReady = await chainH.ready
    const chainUrl: string = (chainReady.urls as string[] | undefined)?.find(u => u.includes('127.0.0.1')) ?? chainReady.url
    state.chainUrl = chainUrl
    save()
    say(`dev chain ready: ${chainUrl} (blocks every ${o.blockTime} ms${o.forcedError ? '; Truebit forced errors on: the solver will be told to commit up to 4 wrong steps' : ''})`)

    // 3. bootstrap peer and peers
    const boot = track(spawnCli('bootstrap', ['bootstrap', '--json', '--private-addrs', '--listen', `/ip4/${listenHost}/tcp/0`, '--data-dir', join(dir, 'bootstrap')], logDir), { dataDir: join(dir, 'bootstrap'), role: 'bootstrap' })
    const bootAddrs: string[] = (await boot.ready).multiaddrs
    const bootAddr = bootAddrs.find(a => a.startsWith('/ip4/127.0.0.1/')) ?? bootAddrs[0]
    state.bootstrap = bootAddr
    save()
    say(`bootstrap peer ready: ${bootAddr}`, { bootstrap: bootAddr })
    if (o.public != null) {
      const publicBoot = bootAddr.replace('/ip4/127.0.0.1/', `/ip4/${o.public}/`)
      const hint = joinHint({ listenAddrs: [publicBoot], network: 'devnet', privateAddrs: true, chainUrl: chainUrl.replace('127.0.0.1', o.public) })!
      say(`another host joins this devnet with (the dev accounts //Alice … //Ferdie are funded):\n  ${hint.command}`, { join: hint.command })
    }

    const { Keyring } = await import('@polkadot/keyring')
    const { u8aToHex } = await import('@polkadot/util')
    const { cryptoWaitReady } = await import('@polkadot/util-crypto')
    await cryptoWaitReady()
    const keyring = new Keyring({ type: 'sr25519' })
    const peers: PeerRef[] = Array.from({ length: o.peers }, (_, i) => {
      const role = DEFAULT_ROLES[i % DEFAULT_ROLES.length]
      const name = `peer${i + 1}-${role}`
      const account = `//Peer${i + 1}`
      return { name, role, dataDir: join(dir, name), account, accountId: u8aToHex(keyring.addFromUri(account).publicKey) }
    })
    if (o.peers > 8) throw new Error('the dev chain funds //Peer1..//Peer8: at most 8 peers with chain accounts')
    const handles = peers.map(p => track(spawnCli(p.name, ['join', '--json', '--bootstrap', bootAddr, '--roles', p.role, '--chain', chainUrl, '--account', p.account, '--private-addrs', '--listen', `/ip4/${listenHost}/tcp/0`, '--data-dir', p.dataDir], logDir), { dataDir: p.dataDir, role: p.role, account: p.account }))
    for (let i = 0; i < peers.length; i++) {
      const r = await handles[i].ready
      say(`${peers[i].name} ready: ${r.peerId as string} (account ${peers[i].account})`, { peer: peers[i].name, peerId: r.peerId, role: peers[i].role })
    }

    // 4. dashboard
    dashboard = await startDashboard({
      peers: [{ name: 'bootstrap', dataDir: join(dir, 'bootstrap'), role: 'bootstrap' }, ...peers.map(p => ({ name: p.name, dataDir: p.dataDir, role: p.role }))],
      chainUrl,
      port: o.dashboardPort
    })
    state.dashboardUrl = dashboard.url
    save()
    say(`dashboard: ${dashboard.url}`, { dashboard: dashboard.url })

    // 5. swarm formed and every peer registered on chain
    const { ChainClient } = await import('../node/chain/client.js')
    observer = await ChainClient.connect({ url: chainUrl, signer: '//Alice' })
    await waitForSwarm(peers, observer, logDir, say)
    const balancesBefore = new Map<string, bigint>()
    for (const p of peers) { const b = await observer.balance(p.accountId); balancesBefore.set(p.accountId, b.free + b.reserved) }

    // 6. submit and follow the task
    let taskId: number | undefined
    const watcher = new ScenarioWatcher(observer, peers, () => taskId, say, { rootEvery: task.rootEvery, steps: task.steps })
    cleanups.push(await watcher.start())
    cleanups.push(watchProgress(peers, () => taskId, (key, item, w) => {
      if (w.phase === 'done' || w.phase === 'failed') { showProgress(key, undefined, {}); say(`${key}: ${item.text}`, { peer: key, progress: w }) } else showProgress(key, item, { peer: key, progress: w })
    }, key => showProgress(key, undefined, {}), progress.tty ? 500 : 1000))
    cleanups.push(watchWindow(observer, watcher, o.blockTime, (item, data) => showProgress('window', item, data), progress.tty && o.json !== true ? 1000 : 5000))
    cleanups.push(watchDisputes(dashboard.aggregator, showProgress))
    const submitter = peers.find(p => p.role === 'submitter')!
    say(`submitting the task through ${submitter.name} (program and dataset are published as shards; the submitter computes the commitments)…`)
    const sub = await (await ControlClient.fromDataDir(submitter.dataDir)).post<{ taskId: number }>('/v1/submit', {
      program: JSON.parse(await readFile(taskFile, 'utf8')),
      // a reward above the chain's jackpot (200): a forced error's jackpot comes out of it, and the honest solver keeps the rest
      economics: { challengeWindow, solveTimeout: task.solveTimeout, solverReward: String(400n * 10n ** 12n) }
    }, 610_000)
    taskId = sub.taskId
    state.taskId = taskId
    state.phase = 'submitted'
    save()
    await writeFile(join(dir, 'task-id'), String(taskId))
    const result = await watcher.waitSettled(Math.max(30 * 60_000, task.steps * 2000))
    progress.clear()
    state.phase = result.success ? 'settled (success)' : 'settled (failed)'
    save()

    // 7. summary
    await summarize({
      dir, json: o.json === true, forcedError: o.forcedError, challengeWindow, taskId, success: result.success, submitterDataDir: submitter.dataDir,
      peers, observer, watcher, balancesBefore, dashboardUrl: dashboard.url, say
    })
    if (o.exitWhenSettled === true) await shutdown(result.success || watcher.disputes.length > 0 ? 0 : 1)
    say(`the devnet keeps running; Ctrl-C (or "npm run devnet -- down") stops it. Dashboard: ${dashboard.url}`)
  } catch (err) {
    say(`error: ${(err as Error).message}`)
    await shutdown(1)
  }
}
