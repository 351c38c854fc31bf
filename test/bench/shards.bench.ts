import { afterAll, bench, describe } from 'vitest'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { multiaddr } from '@multiformats/multiaddr'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { ControlClient } from '../../node/control/client.js'
import { readControlFiles } from '../../node/control/files.js'
import { createHost, type Host } from '../../node/p2p/host.js'
import { firstJson, hasJson, killAll, startCli, stopProc, tempDir, waitForOutput, type Proc } from '../helpers/procs.js'

// Shard exchange throughput on loopback (run: npm run bench -- shards).
// Separate OS processes started through the CLI: 3 providers hold the same
// 50 MiB checkpoint; one fetcher fetches it from 1 provider and from all 3
// (DHT lookup), deleting its copy between iterations. Also: DHT provide and
// first-provider latency, and a raw libp2p stream in one process as the
// same-machine, same-moment baseline. Figures go to docs/benchmarks.md.

const MiB = 1024 * 1024
const SIZE = 50 * MiB
const ITER = { iterations: 3, warmupIterations: 0, time: 0, warmupTime: 0 }

const dir = await tempDir('proofswarm-shards-bench-')
const procs: Proc[] = []
const figures: Record<string, number[]> = {}
const note = (k: string, v: number): void => { (figures[k] ??= []).push(v) }

async function start (args: string[], env: Record<string, string> = {}): Promise<{ dataDir: string, id: string, addr: string }> {
  const dataDir = args[args.indexOf('--data-dir') + 1]
  const p = startCli([...args, '--listen', '/ip4/127.0.0.1/tcp/0', '--json', '--log-level', 'warn'], env)
  procs.push(p)
  await waitForOutput(p, hasJson, 30_000, 'peer ready')
  const j = firstJson(p.stdout())
  return { dataDir, id: j.peerId, addr: j.multiaddrs[0] }
}

const boot = await start(['bootstrap', '--data-dir', join(dir.path, 'boot')])
const providers = await Promise.all([0, 1, 2].map(async i => await start(['join', '--bootstrap', boot.addr, '--data-dir', join(dir.path, `p${i}`)])))
const fetcherEnv = { PROOFSWARM_SHARDS_RETENTION_MS: '1', PROOFSWARM_SHARDS_GC_INTERVAL_MS: '0' }
const fetcher = await start(['join', '--bootstrap', boot.addr, '--data-dir', join(dir.path, 'f')], fetcherEnv)
const file = join(dir.path, 'ckpt.bin')
await writeFile(file, randomBytes(SIZE))
let root = ''
for (const p of providers) {
  const c = await ControlClient.fromDataDir(p.dataDir)
  const t0 = performance.now()
  root = (await c.post<{ cid: string }>('/v1/shards/add', { path: file, name: 'ckpt', kind: 'checkpoint' })).cid
  note('add 50 MiB (chunk + hash + LevelDB), ms', performance.now() - t0)
  const t1 = performance.now()
  await c.post('/v1/dht/provide', { cid: root })
  note('DHT provide, ms', performance.now() - t1)
}

async function fetchOnce (from?: string[], maxProviders = 3, f = fetcher, tag = ''): Promise<void> {
  const { info, token } = await readControlFiles(f.dataDir)
  const res = await fetch(`http://127.0.0.1:${info.port}/v1/shards/get`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cid: root, providers: from, maxProviders })
  })
  const lines = (await res.text()).trim().split('\n').map(l => JSON.parse(l))
  const done = lines.find(l => l.event === 'done')
  if (done == null) throw new Error(`fetch failed: ${JSON.stringify(lines.at(-1))}`)
  const key = (from != null ? `${from.length} provider(s)` : 'DHT, up to 3 providers') + tag
  note(`fetch 50 MiB from ${key}: transfer MiB/s`, SIZE / MiB / (done.transferMs / 1000))
  note(`fetch 50 MiB from ${key}: total ms (lookup + manifest + transfer)`, done.durationMs)
  note(`fetch 50 MiB from ${key}: fetcher CPU ms`, done.cpuMs)
  if (done.firstProviderMs != null && from == null) note('first provider found (DHT), ms', done.firstProviderMs)
  // drop the copy so the next iteration fetches everything again
  await (await ControlClient.fromDataDir(f.dataDir)).post('/v1/shards/gc', { })
}

// same machine, same moment: one raw libp2p stream (noise + yamux) between two
// processes — the ceiling for any protocol over one connection
const RAW_SERVER = `
import './dist/node/polyfill.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { lpStream } from '@libp2p/utils'
import { createHost } from './dist/node/p2p/host.js'
const h = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })
await h.handle('/bench/raw/1', (stream) => { void (async () => {
  const lp = lpStream(stream, { maxDataLength: 2 << 20 })
  const block = new Uint8Array(1 << 20)
  for (let i = 0; i < ${SIZE / MiB}; i++) await lp.write(block)
  await stream.close()
})() })
console.log(JSON.stringify({ addr: h.getMultiaddrs()[0].toString() }))
process.on('SIGTERM', () => { void h.stop().then(() => process.exit(0)) })
`
const rawChild = spawn(process.execPath, ['--input-type=module', '-e', RAW_SERVER], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] })
const rawAddr: string = await new Promise((resolve, reject) => {
  let out = ''
  rawChild.stdout.on('data', (d: Buffer) => { out += d.toString(); const m = /\{.*\}/.exec(out); if (m != null) resolve(JSON.parse(m[0]).addr) })
  rawChild.on('exit', () => reject(new Error('raw stream server exited')))
})
const rawClient = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })

async function rawStreamProcesses (): Promise<void> {
  const t0 = performance.now()
  const s = await rawClient.dialProtocol(multiaddr(rawAddr), '/bench/raw/1')
  const lp = lpStream(s, { maxDataLength: 2 * MiB, maxBufferSize: 8 * MiB })
  let got = 0
  while (got < SIZE) got += (await lp.read()).byteLength
  note('raw libp2p stream, two processes: MiB/s', SIZE / MiB / ((performance.now() - t0) / 1000))
}

// same machine, same moment: one raw libp2p stream (noise + yamux) in one process
async function rawStream (): Promise<void> {
  const hosts: Host[] = await Promise.all([0, 1].map(async () => await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })))
  try {
    await hosts[1].handle('/bench/raw/1', stream => {
      void (async () => {
        const lp = lpStream(stream, { maxDataLength: 2 * MiB, maxBufferSize: 8 * MiB })
        const block = new Uint8Array(MiB)
        for (let i = 0; i < SIZE / MiB; i++) await lp.write(block)
        await stream.close()
      })()
    })
    await hosts[0].dial(hosts[1].getMultiaddrs()[0])
    const t0 = performance.now()
    const s = await hosts[0].dialProtocol(hosts[1].peerId, '/bench/raw/1')
    const lp = lpStream(s, { maxDataLength: 2 * MiB, maxBufferSize: 8 * MiB })
    let got = 0
    while (got < SIZE) got += (await lp.read()).byteLength
    note('raw libp2p stream, one process: MiB/s', SIZE / MiB / ((performance.now() - t0) / 1000))
  } finally {
    await Promise.all(hosts.map(async h => await h.stop()))
  }
}

afterAll(async () => {
  console.log('\nshards bench figures (median of runs):')
  for (const [k, v] of Object.entries(figures)) {
    const s = [...v].sort((a, b) => a - b)
    console.log(`  ${k}: median ${s[s.length >> 1].toFixed(1)} (runs: ${v.map(x => x.toFixed(1)).join(', ')})`)
  }
  await rawClient.stop()
  rawChild.kill('SIGTERM')
  await Promise.all(procs.map(async p => await stopProc(p)))
  killAll()
  await dir.cleanup()
})

describe('shards', () => {
  bench('fetch 50 MiB checkpoint from 1 provider (processes)', async () => { await fetchOnce([providers[0].id], 1) }, ITER)
  bench('fetch 50 MiB checkpoint from 3 providers found in the DHT (processes)', async () => { await fetchOnce(undefined, 3) }, ITER)
  bench('raw libp2p stream 50 MiB (two processes, baseline)', rawStreamProcesses, ITER)
  bench('raw libp2p stream 50 MiB (one process, baseline)', rawStream, ITER)
})
