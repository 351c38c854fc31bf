// The devnet's forced-error dispute, measured from the chain: runs the devnet
// (a synthetic 40-step MLP task, Truebit forced errors on) to settlement and
// reads every block while it runs, counting the dispute transactions of each
// dispute and the time from its opening to its ruling. Plain script over
// dist/ (npx vite-node test/bench/devnet-disputes.ts [block ms]); prints one JSON line.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import type { Header } from '@polkadot/types/interfaces'

interface Dispute {
  calls: string[]
  bytes: number
  openedBlock?: number
  openedAt?: number
  resolvedBlock?: number
  ms?: number
  how?: string
  forcedError?: string
}

const BLOCK_MS = Number(process.argv[2] ?? 500)
const CALLS = ['openDispute', 'revealDispute', 'forceMove', 'answerMove', 'claimTimeout', 'adjudicate']
// the calls that open a dispute (a node reveals its committed dispute: docs/economics.md "Copied disputes and claims")
const OPENS = ['openDispute', 'revealDispute']
const dir = mkdtempSync(join(tmpdir(), 'ps-devnet-disputes-'))
const cli = join('dist', 'node', 'cli', 'main.js')
try {
  const task = join(dir, 'task.json')
  const t = spawnSync('node', [cli, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '40', '--batch', '32', '--out', task], { stdio: 'inherit' })
  if (t.status !== 0) throw new Error('task new failed')
  const dev = spawn('node', [join('dist', 'devnet', 'cli.js'), '--dir', join(dir, 'devnet'), '--task', task, '--block-time', String(BLOCK_MS), '--challenge-window', '200', '--exit-when-settled', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const disputes = new Map<string, Dispute>()
  let api: ApiPromise | undefined
  let buf = ''
  const seen = new Set()
  const onBlock = async (header: Header): Promise<void> => {
    if (api === undefined) return
    const hash = header.hash.toHex()
    const n = header.number.toNumber()
    if (seen.has(n)) return
    seen.add(n)
    const [block, events] = await Promise.all([api.rpc.chain.getBlock(hash), api.query.system.events.at(hash)])
    block.block.extrinsics.forEach((ex, i) => {
      if (ex.method.section !== 'arbitration' || !CALLS.includes(ex.method.method)) return
      const opened = events.find(e => e.phase.isApplyExtrinsic && e.phase.asApplyExtrinsic.toNumber() === i && e.event.method === 'DisputeOpened')
      const id = OPENS.includes(ex.method.method) ? opened?.event.data[0].toString() : ex.method.args[0].toString()
      if (id == null) return
      const d: Dispute = disputes.get(id) ?? { calls: [], bytes: 0 }
      d.calls.push(ex.method.method); d.bytes += ex.encodedLength
      if (OPENS.includes(ex.method.method)) { d.openedBlock = n; d.openedAt = Date.now() }
      disputes.set(id, d)
    })
    for (const e of events) {
      if (e.event.section !== 'arbitration' || e.event.method !== 'DisputeResolved') continue
      const d = disputes.get(e.event.data[0].toString())
      if (d == null) continue
      d.resolvedBlock = n; d.ms = Date.now() - (d.openedAt ?? 0); d.how = e.event.data[3].toString(); d.forcedError = e.event.data[5].toString()
    }
  }
  dev.stdout.on('data', (chunk: Buffer) => {
    buf += chunk.toString()
    let i
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1)
      const m = /dev chain ready: (ws:\/\/\S+)/.exec(line)
      if (m != null && api == null) {
        void ApiPromise.create({ provider: new WsProvider(m[1]), noInitWarn: true }).then(async a => {
          api = a; await a.rpc.chain.subscribeNewHeads(h => { void onBlock(h).catch(err => console.error(err)) })
        })
      }
      if (/dispute|settled/i.test(line)) process.stderr.write(line + '\n')
    }
  })
  const code = await new Promise(resolve => dev.on('exit', resolve))
  await (api as ApiPromise | undefined)?.disconnect().catch(() => {})
  const out = [...disputes.entries()].map(
    ([id, d]) => ({
      disputeId: Number(id), calls: d.calls, txs: d.calls.length, bytes: d.bytes,
      blocks: (d.resolvedBlock ?? NaN) - (d.openedBlock ?? NaN),
      chainMs: ((d.resolvedBlock ?? NaN) - (d.openedBlock ?? NaN)) * BLOCK_MS, wallMs: d.ms, how: d.how,
      forcedError: d.forcedError
    })
  )
  console.log(`DEVNET-DISPUTES ${JSON.stringify({ blockMs: BLOCK_MS, exit: code, disputes: out })}`)
} finally {
  // KEEP_DEVNET=1 keeps the devnet directory (its logs) for a closer look
  if (process.env.KEEP_DEVNET == null) rmSync(dir, { recursive: true, force: true })
  else console.error(`devnet kept in ${dir}`)
}
