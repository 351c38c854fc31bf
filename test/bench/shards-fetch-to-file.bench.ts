// A verifier fetching checkpoints with fetchToFile, the old way vs the new
// (run: npm run bench -- shards-fetch-to-file; needs dist/, which `npm run
// bench` builds). Old (`copy: true`): every block into LevelDB, then read
// back, hashed and written to the file. New (default): each block, checked
// against its CID, written at its offset in the file; the shard held by
// reference to it. One provider process holds the files; this process
// fetches them over 127.0.0.1 in alternating batches of 20 distinct 1.2 MB
// files (a task's checkpoints), old and new side by side. Per file: CPU of
// this process (all threads: LevelDB's and libuv's included), wall time, and
// the shard store's growth on disk.
import '../../node/polyfill.js'
import { spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { setFlagsFromString } from 'node:v8'
import { fromDist, nativeScriptArgs } from './ts-script.js'
const { createHost } = await fromDist<typeof import('../../node/p2p/host.js')>('node/p2p/host.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')
const { ShardService } = await fromDist<typeof import('../../node/shards/service.js')>('node/shards/service.js')
const { PEER_HEAP_GROWING_PERCENT, tunePeerHeap } = await fromDist<typeof import('../../node/cli/peer-heap.js')>('node/cli/peer-heap.js')

const { enableHeapGrowthHolds } = await fromDist<typeof import('../../node/heap-growth.js')>('node/heap-growth.js')

// every process here is a peer: the V8 heap settings `proofswarm join` applies
// (the transfer part compares them with V8's default old-generation growth)
tunePeerHeap()
// BENCH_HEAP=v8: V8's default old-generation growth instead, never raised around transfers
if (process.env.BENCH_HEAP === 'v8') enableHeapGrowthHolds(0)
// BENCH_HEAP=always: the raised growth from the start, whether moving checkpoints or not (the peer's setting before it was held around transfers)
if (process.env.BENCH_HEAP === 'always') { enableHeapGrowthHolds(0); setFlagsFromString(`--heap-growing-percent=${PEER_HEAP_GROWING_PERCENT}`) }
// BENCH_HEAP=previous: the peer settings before --optimize-for-size was added
if (process.env.BENCH_HEAP === 'previous') setFlagsFromString('--no-optimize-for-size')

const FILE_BYTES = 1_200_000
const CHECKPOINTS = 40 // per transfer batch: about two verifiers' checkpoints of the devnet's task
const BATCHES_T = 3 // measured batches per process (a peer lives long: GC settles after the first fetches)
const PER_BATCH = 20
const ROUNDS = 8
const WARMUP = 10 // files per way, not counted (the first fetches pay for the connection and JIT)
const log = createLogger('bench', { level: 'silent', pretty: false })

type Peer = Awaited<ReturnType<typeof peer>>
async function peer (dataDir: string) {
  const host = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })
  const svc = await ShardService.start({ host, dataDir, log, gcIntervalMs: 0 })
  return { host, svc }
}

if (process.argv[2] === 'provider') {
  // child: holds `n` distinct checkpoint-like files (by copy), prints where to find them
  const n = Number(process.argv[4])
  const { host, svc } = await peer(process.argv[3])
  const files = []
  for (let i = 0; i < n; i++) {
    const bytes = randomBytes(FILE_BYTES)
    const r = await svc.addBytes(bytes, { name: `ckpt-${i}-state.bin`, kind: 'checkpoint' }, { provide: false })
    files.push({ cid: r.cid, sha256: createHash('sha256').update(bytes).digest('hex') })
  }
  process.stdout.write(JSON.stringify({ peerId: host.peerId.toString(), addr: host.getMultiaddrs()[0].toString(), files }) + '\n')
  process.stdin.resume()
  process.stdin.on('end', () => { void svc.stop().then(() => host.stop()).then(() => process.exit(0)) })
} else if (process.argv[2] === 'solver') {
  // child: a solver serving `n` checkpoints by reference from its run directory
  // (state.bin 1.2 MB + manifest.json ~2 kB each, as node/roles publishes them)
  const [, , , dataDir, runDir, n] = process.argv
  const { host, svc } = await peer(dataDir)
  const cks = []
  for (let i = 0; i < Number(n); i++) {
    const d = join(runDir, `step-${i}`)
    await mkdir(d, { recursive: true })
    const state = randomBytes(FILE_BYTES)
    const manifest = Buffer.from(JSON.stringify({ step: i, tensors: Array.from({ length: 24 }, (_, t) => ({ name: `layer${t}/kernel`, shape: [784, 128], offset: t * 50_000, sha256: randomBytes(32).toString('hex') })) }))
    await writeFile(join(d, 'state.bin'), state)
    await writeFile(join(d, 'manifest.json'), manifest)
    const add = async (f: string): Promise<string> => (await svc.addFile(join(d, f), { name: `step-${i}-${f}`, kind: 'checkpoint' }, { byReference: true, provide: false })).cid
    cks.push({ manifest: await add('manifest.json'), data: await add('state.bin'), sha256: createHash('sha256').update(state).digest('hex') })
  }
  process.stdout.write(JSON.stringify({ peerId: host.peerId.toString(), addr: host.getMultiaddrs()[0].toString(), cks }) + '\n')
  // "heap <percent>" lines switch the old generation's growth (0 = V8's default) between rounds
  createInterface({ input: process.stdin }).on('line', l => {
    const m = /^heap (\d+)$/.exec(l)
    if (m != null) { setFlagsFromString(`--heap-growing-percent=${m[1]}`); process.stdout.write('ok\n') }
  })
  process.stdin.on('end', () => { void svc.stop().then(() => host.stop()).then(() => process.exit(0)) })
} else if (process.argv[2] === 'transfer-round') {
  // child: one way's round (a fresh solver and fetcher pair), prints its figures as JSON
  process.stdout.write(JSON.stringify(await transferRound(process.argv[3])) + '\n')
  process.exit(0)
} else if (process.argv[2] === 'transfer') {
  await transfer(false)
} else {
  const { machine, writeSection } = await import('./report.js')
  const dir = await mkdtemp(join(tmpdir(), 'proofswarm-f2f-bench-'))
  const total = 2 * (ROUNDS * PER_BATCH + WARMUP)
  const child = spawn(process.execPath, await nativeScriptArgs(fileURLToPath(import.meta.url), ['provider', join(dir, 'provider'), String(total)]), { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise(resolve => child.on('exit', resolve))
  type Mode = 'copy' | 'ref'
  const MODES: Mode[] = ['copy', 'ref']
  const me: Partial<Record<Mode, Peer>> = {}
  try {
    const info = JSON.parse(await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve)
      child.once('exit', code => reject(new Error(`provider exited (${code})`)))
    }))
    // one shard store per way (own LevelDB each, in this one process): store growth is then per way
    for (const mode of MODES) {
      const p = me[mode] = await peer(join(dir, `fetcher-${mode}`))
      await p.host.dial(multiaddr(info.addr))
    }
    const outDir = join(dir, 'out')
    await mkdir(outDir)
    const dirBytes = async (p: string): Promise<number> => {
      let n = 0; for (const e of await readdir(p, { withFileTypes: true })) n += e.isDirectory()
        ? await dirBytes(join(p, e.name))
        : (await stat(join(p, e.name))).size; return n
    }
    const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000
    const queue: Array<{ cid: string, sha256: string }> = [...info.files]
    type Figures = { cpu: number[], wall: number[], bytes: number[] }
    const fig: Record<Mode, Figures> = { copy: { cpu: [], wall: [], bytes: [] }, ref: { cpu: [], wall: [], bytes: [] } }
    const grown = { copy: 0, ref: 0 }
    const load: number[] = []
    let k = 0
    const batch = async (mode: Mode, n: number): Promise<Record<keyof Figures, number>> => {
      const fetcher = me[mode]
      if (fetcher === undefined) throw new Error(`no ${mode} fetcher`)
      const files = queue.splice(0, n)
      const shardsDir = join(dir, `fetcher-${mode}`, 'shards')
      const before = await dirBytes(shardsDir)
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      for (const f of files) {
        const r = await fetcher.svc.fetchToFile(f.cid, join(outDir, `state-${k++}.bin`), { providers: [info.peerId], provide: false, copy: mode === 'copy' })
        if (r.sha256 !== f.sha256 || r.fetchedBlocks !== 2) throw new Error(`${mode}: wrong result for ${f.cid}: ${JSON.stringify(r)}`)
      }
      const cpu = cpuMs(process.cpuUsage(c0)) / n
      const wall = (performance.now() - t0) / n
      return { cpu, wall, bytes: (await dirBytes(shardsDir) - before) / n }
    }
    for (const mode of MODES) await batch(mode, WARMUP)
    await new Promise(resolve => setTimeout(resolve, 3000)) // let the provider's LevelDB settle after its adds
    const start = { copy: 0, ref: 0 }
    for (const mode of MODES) start[mode] = await dirBytes(join(dir, `fetcher-${mode}`, 'shards'))
    for (let round = 0; round < ROUNDS; round++) {
      // alternate which goes first: drifting machine load hits both alike
      for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
        const r = await batch(mode, PER_BATCH)
        for (const key of ['cpu', 'wall', 'bytes'] as const) fig[mode][key].push(r[key])
        load.push(loadavg()[0])
      }
    }
    for (const mode of MODES) grown[mode] = (await dirBytes(join(dir, `fetcher-${mode}`, 'shards')) - start[mode]) / (ROUNDS * PER_BATCH)
    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1] }
    const row = (label: string, key: keyof Figures, unit: string, digits: number, scale = 1): string => {
      const c = median(fig.copy[key]) / scale
      const r = median(fig.ref[key]) / scale
      const each = (m: Mode): string => fig[m][key].map(x => (x / scale).toFixed(digits)).join(', ')
      return `| ${label} | ${c.toFixed(digits)} ${unit} (${each('copy')}) | ${r.toFixed(digits)} ${unit} (${each('ref')}) | ${(r / c).toFixed(2)} |`
    }
    // the least-disturbed batch of each way: on a shared machine, closer to the intrinsic cost than the median
    const best = (label: string, key: keyof Figures, unit: string, digits: number): string => {
      const c = Math.min(...fig.copy[key]); const r = Math.min(...fig.ref[key])
      return `| ${label} | ${c.toFixed(digits)} ${unit} | ${r.toFixed(digits)} ${unit} | ${(r / c).toFixed(2)} |`
    }
    const body = `
Machine: ${machine()}; load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} during the run.
Run: \`npm run bench -- shards-fetch-to-file\` (test/bench/shards-fetch-to-file.bench.ts), ${new Date().toISOString().slice(0, 10)}. A provider
process holds distinct ${(FILE_BYTES / 1e6).toFixed(1)} MB checkpoint-like files (2 blocks each); this process fetches them with
\`fetchToFile(cid, path, { providers: [provider] })\` over 127.0.0.1, ${ROUNDS} rounds of a batch of ${PER_BATCH} files (a verifier's checkpoints
for one task) per way, alternating which goes first; ${WARMUP} files per way first as warm-up (connection, JIT), not counted.
Both processes run with the V8 heap settings of \`proofswarm join\` (node/cli/peer-heap.ts; before 2026-11-22's second run they had V8's defaults).
Old = \`copy: true\` (blocks into LevelDB, then read back, hashed and written to the file: the previous fetchToFile); new = the default
(blocks CID-checked and written at their offsets in the file, content sha256 in order while writing, shard held by reference).
Per file: median over the rounds (each batch's per-file mean in brackets). CPU = the fetching process, all threads. Each way
has its own shard store (own LevelDB, as on a peer) in the fetching process; store growth = data-dir/shards on disk over all
rounds / files (per batch in brackets: LevelDB writes blocks to its log, then again to a table when the memtable is flushed).

| per 1.2 MB file fetched | old (copy into the store) | new (straight to the file) | new / old |
|---|---|---|---|
${row('CPU', 'cpu', 'ms', 2)}
${row('wall time', 'wall', 'ms', 2)}
${best('CPU, best batch', 'cpu', 'ms', 2)}
${best('wall time, best batch', 'wall', 'ms', 2)}
| shard store growth on disk (all rounds) | ${(grown.copy / 1000).toFixed(1)} kB (${fig.copy.bytes.map(x => (x / 1000).toFixed(1)).join(', ')}) | ${(grown.ref / 1000).toFixed(1)} kB (${fig.ref.bytes.map(x => (x / 1000).toFixed(1)).join(', ')}) | ${(grown.ref / grown.copy).toFixed(4)} |
`
    writeSection('Shards: fetchToFile straight to the file', body)
    console.log(body)
  } finally {
    child.stdin.end()
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    if (child.exitCode == null) child.kill('SIGKILL')
    for (const p of Object.values(me)) { if (p !== undefined) { await p.svc.stop(); await p.host.stop() } }
    await rm(dir, { recursive: true, force: true })
  }
}
if (process.argv[2] == null) await transfer(true)

/** CPU seconds of process `pid`: main thread, other threads. */
function threadsOf (pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8')
      // thread names are all "node" here: the main thread (tid = pid) vs the others (libuv pool, V8 GC/compiler, LevelDB)
      const name = t === String(pid) ? 'main' : 'other threads'
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / 100
    } catch { /* thread ended */ }
  }
  return out
}
function threadDelta (a: Record<string, number>, b: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(Object.keys(b).map(k => [k, +(((b[k] - (a[k] ?? 0)) * 1000) / n).toFixed(1)]).filter(([, v]) => Number(v) > 0))
}

/** CPU seconds (user + system, all threads) of process `pid`, from /proc (10 ms ticks). */
function cpuOfPid (pid: number | undefined): number {
  const st = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}

// What a verifier's checkpoint fetches cost both ends (issue 7's overhead):
// a solver process serves CHECKPOINTS checkpoints by reference; a fetching
// process fetches the data of each (state.bin, as a verifier does) with fetchToFile and
// the solver's peer id as provider hint, as node/roles does. CPU per
// checkpoint of both processes. Both run with the V8 heap settings of
// `proofswarm join` (node/cli/peer-heap.ts) or, alternately (ABBA), with V8's
// default old-generation growth: a fresh pair of processes per round, since
// a heap grown in one round would carry over. `npm run
// bench -- shards-fetch-to-file transfer` runs only this part
// (prints, writes no report); BENCH_CPU_PROF=<dir> profiles the solver.
async function transferRound (dir: string): Promise<Record<'fetch' | 'serve' | 'wall' | 'load', number>> {
  const prof = process.env.BENCH_CPU_PROF != null ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, await nativeScriptArgs(fileURLToPath(import.meta.url), ['solver', join(dir, 'solver'), join(dir, 'run'), String((1 + BATCHES_T) * CHECKPOINTS)], prof), { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise(resolve => child.on('exit', resolve))
  let me: Peer | undefined
  try {
    const info = JSON.parse(await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve)
      child.once('exit', code => reject(new Error(`solver exited (${code})`)))
    }))
    me = await peer(join(dir, 'verifier'))
    await me.host.dial(multiaddr(info.addr))
    const out: Array<Record<'fetch' | 'serve' | 'wall' | 'load', number>> = []
    // a warm-up batch (connection, JIT; not counted), then the measured ones
    for (let b = 0; b <= BATCHES_T; b++) {
      const cks = info.cks.slice(b * CHECKPOINTS, (b + 1) * CHECKPOINTS)
      if (b === 1) await new Promise(resolve => setTimeout(resolve, 1000))
      const th0 = process.env.BENCH_THREADS != null ? [threadsOf(process.pid), threadsOf(child.pid)] : undefined
      const c0 = process.cpuUsage(); const s0 = cpuOfPid(child.pid); const t0 = performance.now()
      for (const [i, ck] of (cks as Array<{ data: string, sha256: string }>).entries()) {
        const d = join(dir, 'fetched', `${b}-${i}`)
        await mkdir(d, { recursive: true })
        // as node/roles/verifier-checks.ts fetchCheckpoint: the data only, no content sha256 (the engine checks what it loads)
        await me.svc.fetchToFile(ck.data, join(d, 'state.bin'), { providers: [info.peerId], provide: false, contentHash: false })
      }
      const u = process.cpuUsage(c0)
      // the content is checked after the timed batch
      for (const [i, ck] of cks.entries()) {
        if (createHash('sha256').update(readFileSync(join(dir, 'fetched', `${b}-${i}`, 'state.bin'))).digest('hex') !== ck.sha256) throw new Error(`wrong content for checkpoint ${i}`)
      }
      // BENCH_THREADS=1: CPU ms per checkpoint by thread, fetcher then solver
      if (th0 != null) process.stderr.write(JSON.stringify({ batch: b, fetcher: threadDelta(th0[0], threadsOf(process.pid), cks.length), solver: threadDelta(th0[1], threadsOf(child.pid), cks.length) }) + '\n')
      if (b > 0) out.push({
        fetch: (u.user + u.system) / 1000 / cks.length, serve: (cpuOfPid(child.pid) - s0) * 1000 / cks.length,
        wall: (performance.now() - t0) / cks.length, load: loadavg()[0]
      })
    }
    // the round's figure: its measured batches together
    const avg = (key: 'fetch' | 'serve' | 'wall' | 'load'): number => out.reduce((n, x) => n + x[key], 0) / out.length
    return { fetch: avg('fetch'), serve: avg('serve'), wall: avg('wall'), load: avg('load') }
  } finally {
    child.stdin.end()
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    if (child.exitCode == null) child.kill('SIGKILL')
    if (me != null) { await me.svc.stop(); await me.host.stop() }
  }
}

async function transfer (write: boolean): Promise<void> {
  const ROUNDS_T = Number(process.env.BENCH_TRANSFER_ROUNDS ?? 2)
  const { machine, writeSection } = await import('./report.js')
  const dir = await mkdtemp(join(tmpdir(), 'proofswarm-f2f-transfer-'))
  try {
    const PEER = PEER_HEAP_GROWING_PERCENT
    // BENCH_TRANSFER_VS=previous: compared with the peer settings before --optimize-for-size instead of V8's default growth;
    // BENCH_TRANSFER_VS=always: with the raised growth held all the time instead of around transfers
    const vs = process.env.BENCH_TRANSFER_VS === 'previous' ? 'previous' : process.env.BENCH_TRANSFER_VS === 'always' ? 'always' : 'v8'
    type Way = 'peer' | 'v8' | 'previous' | 'always'
    type Round = Record<'fetch' | 'serve' | 'wall' | 'load', number>
    const rounds: Record<Way, Round[]> = { peer: [], v8: [], previous: [], always: [] }
    const plan: Way[] = []
    for (let r = 0; r < ROUNDS_T; r++) plan.push(...(r % 2 === 0 ? ['peer', vs] as const : [vs, 'peer'] as const))
    for (const [b, way] of plan.entries()) {
      const env = { ...process.env, BENCH_HEAP: way }
      const r = spawnSync(process.execPath, await nativeScriptArgs(fileURLToPath(import.meta.url), ['transfer-round', join(dir, String(b))]), { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      if (r.status !== 0) throw new Error(`transfer round ${b} failed (${r.status})`)
      rounds[way].push(JSON.parse(r.stdout.trim().split('\n').pop() ?? 'null') as Round)
      await rm(join(dir, String(b)), { recursive: true, force: true })
    }
    const load = [...rounds.peer, ...rounds[vs]].map(x => x.load)
    const median = (xs: number[]): number => {
      const s = [...xs].sort((a, b) => a - b); return s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
    }
    const med = (way: Way, key: keyof Round): number => median(rounds[way].map(x => x[key]))
    const cell = (way: Way, key: keyof Round): string => `${med(way, key).toFixed(1)} ms (${rounds[way].map(x => x[key].toFixed(1)).join(', ')})`
    const total = (way: Way): number => median(rounds[way].map(x => x.fetch + x.serve))
    const row = (way: Way, label: string): string => `| ${label} | ${cell(way, 'fetch')} | ${cell(way, 'serve')} | ${total(way).toFixed(1)} ms | ${cell(way, 'wall')} |`
    const body = `
Machine: ${machine()}; load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}.
Run: \`npm run bench -- shards-fetch-to-file transfer\` (also part of \`npm run bench -- shards-fetch-to-file\`), ${new Date().toISOString().slice(0, 10)}.
A solver process serves checkpoints by reference from its run directory (state.bin ${(FILE_BYTES / 1e6).toFixed(1)} MB = 2 blocks, manifest.json ~2 kB);
a fetching process fetches their data with \`fetchToFile\` (state.bin; \`providers: [solver]\`, \`contentHash: false\`) over 127.0.0.1, as a
verifier does: ${CHECKPOINTS} to warm up (connection, JIT), then ${BATCHES_T} × ${CHECKPOINTS} measured. Both processes run with the V8 heap settings of
\`proofswarm join\` (node/cli/peer-heap.ts: 1 MiB young generation, old generation grown ${PEER}% over its live size after a full GC while moving checkpoints, \`--optimize-for-size\`)
or, for comparison, ${vs === 'v8' ? 'with V8\'s default old-generation growth' : vs === 'always' ? `with the ${PEER}% growth all the time (what peers ran before)` : 'with the same settings without \`--optimize-for-size\`'}; a fresh pair of processes per round, rounds
alternating (ABBA), ${ROUNDS_T} per way. Per checkpoint: median over rounds (each round's mean in brackets); CPU of each process,
all threads (the solver's from /proc, 10 ms ticks).

| per checkpoint | fetch (verifier) CPU | serve (solver) CPU | fetch + serve | wall |
|---|---|---|---|---|
${row('peer', `peer heap settings (growth ${PEER}%)`)}
${row(vs, vs === 'v8' ? 'V8 default old-generation growth' : vs === 'always' ? `growth ${PEER}% all the time` : 'previous peer settings (no --optimize-for-size)')}
| peer / ${vs === 'v8' ? 'default' : vs === 'always' ? 'all the time' : 'previous'} | ${(med('peer', 'fetch') / med(vs, 'fetch')).toFixed(2)} | ${(med('peer', 'serve') / med(vs, 'serve')).toFixed(2)} | ${(total('peer') / total(vs)).toFixed(2)} | ${(med('peer', 'wall') / med(vs, 'wall')).toFixed(2)} |
`
    if (write) writeSection('Shards: checkpoint transfer CPU (fetch + serve)', body)
    console.log(body)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
