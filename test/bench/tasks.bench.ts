// Task throughput: many tasks submitted at once to a devnet of CLI peers
// (solvers, verifiers, whistleblowers; each with its job scheduler), run to
// their final phase on the real dev chain. Reports tasks settled per hour,
// the chain's block fill, the slowest task's time and what the schedulers
// did; fails if a task is lost (not in a final phase by the time limit) or
// the balances do not add up (free + reserved over every account equals the
// total issuance, and every escrow was released).
//
//   npx vite-node test/bench/tasks.bench.ts [--tasks 20] [--solvers 6] [--verifiers 6]
//     [--whistleblowers 2] [--submitters 2] [--steps 20] [--max-jobs <n>] [--block-ms 500]
//     [--limit-min 15] [--compare] [--no-write]
//   --compare: the same run twice, side by side: every peer with --max-jobs 1
//   (one task at a time, as before the scheduler), then with the default
//   (npm run bench -- tasks: the defaults with --compare; writes docs/benchmarks.md)
import { readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { Keyring } from '@polkadot/keyring'
import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { startChainProcess } from '../integration/chain-process.js'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

interface Options {
  tasks: number
  solvers: number
  verifiers: number
  whistleblowers: number
  submitters: number
  steps: number
  maxJobs?: number
  blockMs: number
  limitMin: number
  write: boolean
  compare: boolean
  solveTimeout: number
  challengeWindow: number
}

function parseArgs (argv: string[]): Options {
  const o: Options = {
    tasks: 20, solvers: 6, verifiers: 6, whistleblowers: 2, submitters: 4, steps: 20, blockMs: 500, limitMin: 40,
    write: true, compare: false, solveTimeout: 2400, challengeWindow: 600
  }
  const ints: Record<string, keyof Options> = { '--tasks': 'tasks', '--solvers': 'solvers', '--verifiers': 'verifiers', '--whistleblowers': 'whistleblowers', '--submitters': 'submitters', '--steps': 'steps', '--max-jobs': 'maxJobs', '--block-ms': 'blockMs', '--limit-min': 'limitMin', '--solve-timeout': 'solveTimeout', '--challenge-window': 'challengeWindow' }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--no-write') { o.write = false; continue }
    if (a === '--compare') { o.compare = true; continue }
    const k = ints[a]
    const v = Number(argv[i + 1])
    if (k === undefined || !Number.isInteger(v) || v < 0) throw new Error(`usage: tasks.bench.ts [${Object.keys(ints).join(' <n>] [')} <n>] [--compare] [--no-write]; bad "${a} ${argv[i + 1] ?? ''}"`)
    ;(o as unknown as Record<string, number>)[k] = v
    i++
  }
  if (o.solvers < 1 || o.verifiers < 2 || o.submitters < 1 || o.tasks < 1 || o.steps < 2) throw new Error('at least 1 task, 2 steps, 1 submitter, 1 solver and 2 verifiers')
  return o
}

const FINAL = new Set(['Settled', 'Failed', 'Unverified'])
const UNIT = 10n ** 12n
const say = (s: string): void => { process.stderr.write(`[tasks] ${s}\n`) }

interface TaskTimes { submitted?: number, selected?: number, committed?: number, final?: number, phase?: string, releases: number, timeouts: number }
interface BlockFill { n: number, extrinsics: number, arbitration: number, bytes: number }

type Result = any

async function main (): Promise<void> {
  const o = parseArgs(process.argv.slice(2))
  await cryptoWaitReady()
  // side by side in one run: one task at a time per peer, then the scheduler's default
  const runs: Array<{ label: string, r: Result }> = []
  if (o.compare && o.maxJobs === undefined) runs.push({ label: 'one job at a time (--max-jobs 1)', r: await runOnce({ ...o, maxJobs: 1 }) })
  runs.push({ label: o.maxJobs === undefined ? `scheduler default (--max-jobs ${availableParallelism()})` : `--max-jobs ${o.maxJobs}`, r: await runOnce(o) })
  const problems = runs.flatMap(x => x.r.problems as string[])
  if (o.write && problems.length === 0) writeDoc(runs)
  if (problems.length > 0) throw new Error(problems.join('\n'))
}

async function runOnce (o: Options): Promise<Result> {
  const loads: number[][] = [loadavg()]
  say(`run: ${o.tasks} tasks, --max-jobs ${o.maxJobs ?? 'default'}`)
  const dir = await tempDir('ps-bench-tasks-')
  const procs: Proc[] = []
  let api: ApiPromise | undefined
  let chain: Awaited<ReturnType<typeof startChainProcess>> | undefined
  try {
    chain = await startChainProcess(join(dir.path, 'chain'), ['--block-time', String(o.blockMs)])
    const chainUrl = chain.url
    api = await ApiPromise.create({ provider: new WsProvider(chain.url), noInitWarn: true })
    const kr = new Keyring({ type: 'sr25519' })
    const alice = kr.addFromUri('//Alice')
    // role accounts: fresh ones, funded by Alice (the dev genesis endows too few for this many peers)
    const roles: Array<{ name: string, roles: string }> = [
      ...Array.from({ length: o.submitters }, (_, i) => ({ name: `submitter${i + 1}`, roles: 'submitter' })),
      ...Array.from({ length: o.solvers }, (_, i) => ({ name: `solver${i + 1}`, roles: 'solver' })),
      ...Array.from({ length: o.verifiers }, (_, i) => ({ name: `verifier${i + 1}`, roles: 'verifier' })),
      ...Array.from({ length: o.whistleblowers }, (_, i) => ({ name: `whistleblower${i + 1}`, roles: 'whistleblower' }))
    ]
    const nonce0 = (await api.rpc.system.accountNextIndex(alice.address)).toNumber()
    await Promise.all(roles.map(async (r, i) => await new Promise<void>((resolve, reject) => {
      void api!.tx.balances.transferKeepAlive(kr.addFromUri(`//Bench/${r.name}`).address, 1_000_000n * UNIT).signAndSend(alice, { nonce: nonce0 + i }, res => {
        if (res.dispatchError != null) reject(new Error(`funding ${r.name}: ${res.dispatchError.toString()}`))
        else if (res.status.isInBlock) resolve()
      }).catch(reject)
    })))
    say(`chain ${chain.url}, ${roles.length} accounts funded`)

    // every block: extrinsics, their bytes, and the task events
    const tasks = new Map<number, TaskTimes>()
    const fill: BlockFill[] = []
    const seen = new Set<number>()
    const t = (id: number): TaskTimes => { let x = tasks.get(id); if (x == null) { x = { releases: 0, timeouts: 0 }; tasks.set(id, x) } return x }
    const unsub = await api.rpc.chain.subscribeNewHeads(h => {
      const n = h.number.toNumber()
      if (seen.has(n)) return
      seen.add(n)
      const at = Date.now()
      void (async () => {
        const hash = h.hash
        const [block, events] = await Promise.all([api!.rpc.chain.getBlock(hash), api!.query.system.events.at(hash)])
        const xs = block.block.extrinsics.filter(x => x.method.section !== 'timestamp')
        fill.push({ n, extrinsics: xs.length, arbitration: xs.filter(x => x.method.section === 'arbitration').length, bytes: xs.reduce((s, x) => s + x.encodedLength, 0) })
        for (const { event: e } of events as unknown as Array<{ event: { section: string, method: string, data: Array<{ toString: () => string }> } }>) {
          if (e.section !== 'arbitration') continue
          const id = Number(e.data[0].toString())
          if (e.method === 'TaskSubmitted') t(id).submitted ??= at
          else if (e.method === 'SolverSelected') t(id).selected ??= at
          else if (e.method === 'ProofCommitted') t(id).committed ??= at
          else if (e.method === 'TaskReleased') t(id).releases++
          else if (e.method === 'SolverTimedOut') t(id).timeouts++
          else if (['TaskSettled', 'TaskUnverified', 'TaskFailed'].includes(e.method)) t(id).final ??= at
        }
      })().catch(err => { say(`block ${n}: ${(err as Error).message}`) })
    })

    const boot = startCli(['bootstrap', '--json', '--listen', '/ip4/127.0.0.1/tcp/0', '--data-dir', join(dir.path, 'boot')])
    procs.push(boot)
    await waitForOutput(boot, hasJson, 30_000, 'bootstrap ready')
    const bootAddr = firstJson(boot.stdout()).multiaddrs[0] as string
    const peers = new Map<string, { proc: Proc, dataDir: string }>()
    const jobArgs = o.maxJobs != null ? ['--max-jobs', String(o.maxJobs)] : []
    // a few at a time: 15 peers starting at once on two cores time out their dials
    for (let i = 0; i < roles.length; i += 4) {
      await Promise.all(roles.slice(i, i + 4).map(async r => {
        const dataDir = join(dir.path, r.name)
        const proc = startCli(['join', '--json', '--bootstrap', bootAddr, '--roles', r.roles, '--chain', chainUrl, '--account', `//Bench/${r.name}`, '--data-dir', dataDir, '--listen', '/ip4/127.0.0.1/tcp/0', '--private-addrs', ...jobArgs])
        procs.push(proc)
        await waitForOutput(proc, hasJson, 240_000, `${r.name} ready`)
        peers.set(r.name, { proc, dataDir })
      }))
    }
    // every peer registered on chain (its stake reserved) before the first task
    await waitFor(async () => {
      for (const r of roles) if ((await api!.query.arbitration.nodes(u8aToHex(kr.addFromUri(`//Bench/${r.name}`).publicKey)) as unknown as { isSome: boolean }).isSome !== true) return false
      return true
    }, 120_000, 'on-chain registrations', 1000)
    say(`${roles.length} peers up and registered; load ${loadavg().map(x => x.toFixed(1)).join(' ')}`)
    const issuance0 = await totalBalances(api)

    // one program per task (the seed differs): small MLP tasks on the synthetic dataset
    const files: string[] = []
    for (let i = 0; i < o.tasks; i++) {
      const f = join(dir.path, `task-${i}.json`)
      // a root after every step, as the figures in docs/benchmarks.md were measured (task new's default is every 8)
      const spacing = ['--checkpoint-every', String(Math.max(1, Math.floor(o.steps / 4))), '--root-every', '1']
      const r = await runCli(['task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', String(o.steps), '--batch', '32', '--seed', String(i + 1), ...spacing, '--out', f], 60_000)
      if (r.code !== 0) throw new Error(`task new: ${r.stderr}`)
      files.push(f)
    }
    // all at once: each submitter takes its share, one after another (a submission computes the commitments)
    const t0 = Date.now()
    const ids: number[] = []
    const submitters = roles.filter(r => r.roles === 'submitter').map(r => peers.get(r.name)!)
    await Promise.all(submitters.map(async (s, k) => {
      for (let i = k; i < files.length; i += submitters.length) {
        const r = await runCli(['submit', '--task', files[i], '--verifiers', '2', '--challenge-window', String(o.challengeWindow), '--solve-timeout', String(o.solveTimeout), '--json', '--data-dir', s.dataDir], 300_000)
        if (r.code !== 0) throw new Error(`submit ${i}: ${r.stderr.slice(-2000)}`)
        ids.push(JSON.parse(r.stdout).taskId as number)
      }
    }))
    const submittedIn = (Date.now() - t0) / 1000
    loads.push(loadavg())
    say(`${ids.length} tasks submitted in ${submittedIn.toFixed(1)} s; waiting for their final phases`)
    const limit = Date.now() + o.limitMin * 60_000
    let lastReport = 0
    while (Date.now() < limit) {
      const phases = await Promise.all(ids.map(async id => ((await api!.query.arbitration.tasks(id)).toJSON() as { phase?: string } | null)?.phase ?? '?'))
      ids.forEach((id, i) => { t(id).phase = phases[i] })
      if (phases.every(p => FINAL.has(p))) break
      if (Date.now() - lastReport > 20_000) {
        lastReport = Date.now()
        const count = new Map<string, number>()
        for (const p of phases) count.set(p, (count.get(p) ?? 0) + 1)
        say(`${Math.round((Date.now() - t0) / 1000)} s: ${[...count].map(([p, c]) => `${p} ${c}`).join(', ')}; load ${loadavg()[0].toFixed(1)}`)
        loads.push(loadavg())
      }
      await new Promise(resolve => setTimeout(resolve, 1000))
    }
    unsub()
    loads.push(loadavg())

    // ---- what the schedulers did (their log lines) ----
    const sched = { queued: 0, handedBack: 0, dropped: 0 }
    for (const [name, p] of peers) {
      const err = p.proc.stderr()
      sched.queued += (err.match(/job for task \d+ queued/g) ?? []).length
      sched.handedBack += (err.match(/not taking task \d+/g) ?? []).length
      sched.dropped += (err.match(/dropping the (queued|check)/g) ?? []).length
      if (/supervisor actor failed/.test(err)) say(`${name}: its supervisor actor failed`)
    }

    // ---- what the role actors say of their tasks (outcomes and the last error of each) ----
    const outcomes: Record<string, number> = {}
    const errors: string[] = []
    for (const [name, p] of peers) {
      const a = await control(p.dataDir, '/v1/actors').catch(() => undefined) as { actors?: Array<{ id: string, context: { history?: Array<{ outcome: string }>, error?: string } }> } | undefined
      for (const x of a?.actors ?? []) {
        for (const h of x.context.history ?? []) { const k = `${x.id.split('#')[0]}: ${h.outcome.replace(/^dispute \d+: /, 'dispute: ')}`; outcomes[k] = (outcomes[k] ?? 0) + 1 }
        if (x.context.error != null) errors.push(`${name}: ${x.context.error.slice(0, 200)}`)
      }
    }

    // ---- accounting ----
    const lost = ids.filter(id => !FINAL.has(t(id).phase ?? '?'))
    const issuance1 = await totalBalances(api)
    const escrowHeld: string[] = []
    for (const r of roles.filter(x => x.roles === 'submitter')) {
      const acc = u8aToHex(kr.addFromUri(`//Bench/${r.name}`).publicKey)
      const reserved = BigInt(((await api.query.system.account(acc)).toJSON() as { data: { reserved: string | number } }).data.reserved)
      const node = (await api.query.arbitration.nodes(acc)).toJSON() as { stake: string | number } | null
      const stake = node == null ? 0n : BigInt(node.stake)
      // once every task is over, a submitter holds nothing reserved but its stake
      if (reserved !== stake) escrowHeld.push(`${r.name}: ${(reserved - stake) / UNIT} units still reserved`)
    }
    const times = ids.map(id => t(id)).filter(x => x.submitted != null && x.final != null)
    const slowest = Math.max(...times.map(x => (x.final! - x.submitted!) / 1000))
    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.floor(s.length / 2)] }
    const span = (a: keyof TaskTimes, b: keyof TaskTimes): number => median(
      ids.map(id => t(id)).filter(x => x[a] != null && x[b] != null).map(x => ((x[b] as number) - (x[a] as number)) / 1000)
    )
    const lastFinal = Math.max(...times.map(x => x.final!))
    const busy = (lastFinal - t0) / 1000
    const settled = ids.filter(id => t(id).phase === 'Settled').length
    const win = fill.filter(b => b.n >= 0)
    const maxFill = win.reduce((m, b) => b.extrinsics > m.extrinsics ? b : m, { n: 0, extrinsics: 0, arbitration: 0, bytes: 0 })
    const withTx = win.filter(b => b.extrinsics > 0)
    const result = {
      tasks: ids.length,
      peers: {
        submitters: o.submitters, solvers: o.solvers, verifiers: o.verifiers, whistleblowers: o.whistleblowers, maxJobs: o.maxJobs ?? availableParallelism()
      },
      steps: o.steps,
      blockMs: o.blockMs,
      solveTimeout: o.solveTimeout,
      challengeWindow: o.challengeWindow,
      submittedInSec: +submittedIn.toFixed(1),
      wallSec: +busy.toFixed(1),
      settled,
      phases: Object.fromEntries([...new Set(ids.map(id => t(id).phase))].map(p => [p, ids.filter(id => t(id).phase === p).length])),
      settledPerHour: +(settled / busy * 3600).toFixed(0),
      finalPerHour: +((ids.length - lost.length) / busy * 3600).toFixed(0),
      slowestTaskSec: +slowest.toFixed(1),
      medianSec: { submitToSelected: span('submitted', 'selected'), selectedToCommitted: span('selected', 'committed'), committedToFinal: span('committed', 'final'), submitToFinal: span('submitted', 'final') },
      releases: ids.reduce((s, id) => s + t(id).releases, 0),
      solverTimeouts: ids.reduce((s, id) => s + t(id).timeouts, 0),
      scheduler: sched,
      outcomes,
      errors,
      blocks: {
        count: win.length, withExtrinsics: withTx.length,
        extrinsicsPerBlock: +(win.reduce((s, b) => s + b.extrinsics, 0) / Math.max(1, win.length)).toFixed(2),
        extrinsicsPerBusyBlock: +(withTx.reduce((s, b) => s + b.extrinsics, 0) / Math.max(1, withTx.length)).toFixed(2),
        maxExtrinsics: maxFill.extrinsics, maxBytes: Math.max(0, ...win.map(b => b.bytes)),
        bytesPerBusyBlock: Math.round(withTx.reduce((s, b) => s + b.bytes, 0) / Math.max(1, withTx.length))
      },
      lost,
      balances: { before: issuance0.sum.toString(), after: issuance1.sum.toString(), totalIssuance: issuance1.issuance.toString() },
      escrowHeld,
      machine: { cores: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), load: loads.map(l => +l[0].toFixed(1)) }
    }
    console.log(JSON.stringify(result))
    const problems = [
      ...(lost.length > 0 ? [`${lost.length} task(s) not in a final phase after ${o.limitMin} min: ${lost.join(', ')}`] : []),
      ...(issuance0.sum !== issuance1.sum ? [`free + reserved over every account changed: ${issuance0.sum} → ${issuance1.sum}`] : []),
      ...(issuance1.sum !== issuance1.issuance ? [`free + reserved (${issuance1.sum}) is not the total issuance (${issuance1.issuance})`] : []),
      ...escrowHeld
    ]
    say(`${settled}/${ids.length} settled in ${busy.toFixed(0)} s: ${result.settledPerHour} tasks/hour; slowest ${slowest.toFixed(0)} s`)
    return { ...result, problems }
  } finally {
    await Promise.all(procs.map(async p => await stopProc(p).catch(() => null)))
    await api?.disconnect().catch(() => {})
    await chain?.stop()
    killAll()
    await dir.cleanup()
  }
}

const loadSummary = (l: number[]): string => `${l[0]}, ${Math.max(...l)}, ${l.at(-1)!}`

/** GET on a peer's control API. */
async function control (dataDir: string, path: string): Promise<unknown> {
  const { port } = JSON.parse(readFileSync(join(dataDir, 'control.json'), 'utf8')) as { port: number }
  const token = readFileSync(join(dataDir, 'control.token'), 'utf8').trim()
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(20_000) })
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`)
  return await res.json()
}

/** Free + reserved over every account, and the chain's total issuance. */
async function totalBalances (api: ApiPromise): Promise<{ sum: bigint, issuance: bigint }> {
  let sum = 0n
  for (const [, v] of await api.query.system.account.entries()) {
    const d = (v.toJSON() as { data: { free: string | number, reserved: string | number } }).data
    sum += BigInt(d.free) + BigInt(d.reserved)
  }
  return { sum, issuance: BigInt((await api.query.balances.totalIssuance()).toString()) }
}

function writeDoc (runs: Array<{ label: string, r: Result }>): void {
  const file = join('docs', 'benchmarks.md')
  const doc = readFileSync(file, 'utf8')
  const x = runs.at(-1)!.r
  const cols = runs.map(run => run.r)
  const row = (what: string, f: (r: Result) => string): string => `| ${what} | ${cols.map(f).join(' | ')} |`
  const ratio = runs.length === 2 ? `\n\nSide by side in one run: with the scheduler, ${(cols[1].settledPerHour / Math.max(1, cols[0].settledPerHour)).toFixed(2)}× the tasks settled per hour of one job at a time, and the slowest task ${(cols[0].slowestTaskSec / cols[1].slowestTaskSec).toFixed(2)}× sooner.` : ''
  const section = `## Task throughput

\`npm run bench -- tasks\` (test/bench/tasks.bench.ts): ${x.tasks} tasks submitted at once (by ${x.peers.submitters} submitters, each submitting its share back to back) to a devnet of CLI peers on the real dev chain (${x.blockMs} ms blocks): ${x.peers.solvers} solvers, ${x.peers.verifiers} verifiers, ${x.peers.whistleblowers} whistleblowers, each peer with its job scheduler. Tasks: MLP on the synthetic dataset, ${x.steps} steps, batch 32, 2 verifiers each, challenge window ${x.challengeWindow} blocks (a task settles when it closes), solve timeout ${x.solveTimeout} blocks. Machine: ${x.machine.cores} cores, ${x.machine.memGiB} GiB, shared with other work; 1-minute load average (start, peak, end of each run) ${cols.map(c => loadSummary(c.machine.load as number[])).join('; ')}.

| measure | ${runs.map(run => run.label).join(' | ')} |
|---|${runs.map(() => '---|').join('')}
${row('tasks in a final phase', r => `${r.tasks - r.lost.length} of ${r.tasks} (${Object.entries(r.phases).map(([p, c]) => `${p} ${String(c)}`).join(', ')})`)}
${row('first submission → last final phase', r => `${r.wallSec} s (submissions took ${r.submittedInSec} s)`)}
${row('**tasks settled per hour**', r => `**${r.settledPerHour}**`)}
${row('**slowest task** (submitted → final)', r => `**${r.slowestTaskSec} s**`)}
${row('median: submitted → solver selected → proof committed → final', r => `${r.medianSec.submitToSelected.toFixed(1)} s, ${r.medianSec.selectedToCommitted.toFixed(1)} s, ${r.medianSec.committedToFinal.toFixed(1)} s (total ${r.medianSec.submitToFinal.toFixed(1)} s)`)}
${row('releases / solver timeouts', r => `${r.releases} / ${r.solverTimeouts}`)}
${row('scheduler: jobs queued / tasks handed back / checks dropped', r => `${r.scheduler.queued} / ${r.scheduler.handedBack} / ${r.scheduler.dropped}`)}
${row('what the role actors recorded', r => Object.entries(r.outcomes).sort().map(([k, v]) => `${k} ${String(v)}`).join('; '))}
${row('block fill: extrinsics per block, mean over all blocks; over those with any (max)', r => `${r.blocks.extrinsicsPerBlock}; ${r.blocks.extrinsicsPerBusyBlock} (${r.blocks.maxExtrinsics}) of ${r.blocks.count} blocks`)}
${row('block fill: bytes per block with extrinsics (max)', r => `${r.blocks.bytesPerBusyBlock} (${r.blocks.maxBytes})`)}
${row('balances', () => 'free + reserved over every account = total issuance, before and after; every escrow released')}${ratio}

The dev chain charges no weight (every extrinsic's dispatch weight is 0), so block fill is given as extrinsics and bytes (the dev chain takes up to 8000 extrinsics a block): the chain is nowhere near full; the time goes to training, replays and the challenge window.
`
  const re = /## Task throughput\n[\s\S]*?(?=\n## |$)/
  writeFileSync(file, re.test(doc) ? doc.replace(re, section.trimEnd() + '\n') : doc.trimEnd() + '\n\n' + section)
  say(`results written to ${file}`)
}

main().then(() => process.exit(0), err => { console.error(err instanceof Error ? err.message : err); killAll(); process.exit(1) })
