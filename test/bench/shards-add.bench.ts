// Adding checkpoint files to the shard store by copy vs by reference (run:
// npm run bench -- shards-add; needs dist/, which `npm run bench` builds).
// A solver publishes every checkpoint (state.bin, ~1.2 MB) with addFile; by
// copy each block also goes into LevelDB. Side by side in one run, in
// alternating batches (copy, ref, copy, ref) of distinct files: process CPU
// (all threads, LevelDB's included) and wall time per file, store growth on
// disk per file, and the cost of reading a file back (what serving it costs:
// a by-reference block is read from the file and hashed each time).
import '../../node/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { machine, writeSection } from './report.js'
import { fromDist } from './ts-script.js'
const { createHost } = await fromDist<typeof import('../../node/p2p/host.js')>('node/p2p/host.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')
const { ShardService } = await fromDist<typeof import('../../node/shards/service.js')>('node/shards/service.js')

const FILE_BYTES = 1_200_000
const PER_BATCH = 25
const ROUNDS = 4

const dir = await mkdtemp(join(tmpdir(), 'proofswarm-shards-add-'))
const log = createLogger('bench', { level: 'silent', pretty: false })
type Mode = 'copy' | 'ref'
const MODES: Mode[] = ['copy', 'ref']
const services = {} as Record<Mode, Awaited<ReturnType<typeof ShardService.start>>>
const hosts: Array<Awaited<ReturnType<typeof createHost>>> = []
for (const mode of MODES) {
  const host = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })
  hosts.push(host)
  services[mode] = await ShardService.start({ host, dataDir: join(dir, mode), log, gcIntervalMs: 0 })
}

async function dirBytes (path: string): Promise<number> {
  let n = 0
  for (const e of await readdir(path, { withFileTypes: true })) n += e.isDirectory()
    ? await dirBytes(join(path, e.name))
    : (await stat(join(path, e.name))).size
  return n
}
const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1] }

type Figures = { cpu: number[], wall: number[], bytes: number[], readCpu: number[] }
const fig: Record<Mode, Figures> = { copy: { cpu: [], wall: [], bytes: [], readCpu: [] }, ref: { cpu: [], wall: [], bytes: [], readCpu: [] } }
const cids: Record<Mode, string[]> = { copy: [], ref: [] }
const start: Partial<Record<Mode, number>> = {}
const total = { copy: 0, ref: 0 }
const load: number[] = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    const runDir = join(dir, `run-${round}`)
    await mkdir(runDir)
    const files: string[] = []
    for (const mode of MODES) start[mode] ??= await dirBytes(join(dir, mode, 'shards'))
    for (let i = 0; i < PER_BATCH; i++) {
      const f = join(runDir, `state-${i}.bin`)
      await writeFile(f, randomBytes(FILE_BYTES))
      files.push(f)
    }
    for (const mode of MODES) {
      const svc = services[mode]
      const store = join(dir, mode, 'shards')
      const before = await dirBytes(store)
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      for (const [i, f] of files.entries()) {
        const r = await svc.addFile(f, { name: `ckpt-${round}-${i}-state.bin`, kind: 'checkpoint' }, { reason: 'task-1', provide: false, byReference: mode === 'ref' })
        cids[mode].push(r.cid)
      }
      fig[mode].cpu.push(cpuMs(process.cpuUsage(c0)) / files.length)
      fig[mode].wall.push((performance.now() - t0) / files.length)
      fig[mode].bytes.push((await dirBytes(store) - before) / files.length)
      const c1 = process.cpuUsage()
      for (const cid of cids[mode].slice(-files.length)) await svc.read(cid)
      fig[mode].readCpu.push(cpuMs(process.cpuUsage(c1)) / files.length)
      load.push((await import('node:os')).loadavg()[0])
    }
  }
  for (const mode of MODES) total[mode] = (await dirBytes(join(dir, mode, 'shards')) - (start[mode] ?? 0)) / cids[mode].length
  // same content, same names → same roots either way
  if (cids.copy.join() !== cids.ref.join()) throw new Error('copy and by-reference adds gave different root CIDs')
} finally {
  for (const s of Object.values(services)) await s.stop()
  for (const h of hosts) await h.stop()
  await rm(dir, { recursive: true, force: true })
}

const row = (label: string, k: keyof Figures, unit: string, digits = 2): string => {
  const c = median(fig.copy[k]); const r = median(fig.ref[k])
  return `| ${label} | ${c.toFixed(digits)} ${unit} (${fig.copy[k].map(x => x.toFixed(digits)).join(', ')}) | ${r.toFixed(digits)} ${unit} (${fig.ref[k].map(x => x.toFixed(digits)).join(', ')}) | ${(r / c).toFixed(2)} |`
}
const kb = (k: keyof Figures): Record<Mode, Figures> => ({
  ...fig, copy: { ...fig.copy, [k]: fig.copy[k].map(x => x / 1000) }, ref: { ...fig.ref, [k]: fig.ref[k].map(x => x / 1000) }
})
const body = `
Machine: ${machine()}; load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} during the run.
Run: \`npm run bench -- shards-add\` (test/bench/shards-add.bench.ts), ${new Date().toISOString().slice(0, 10)}. One process, two shard
stores (own LevelDB each, as on a peer), ${ROUNDS} rounds of ${PER_BATCH} distinct ${(FILE_BYTES / 1e6).toFixed(1)} MB files (2 blocks each, a
checkpoint's state.bin) added by copy then by reference (\`addFile(path, meta, { byReference: true })\`). Per file: median
over the rounds (each round's per-file mean in brackets). CPU = this process, all threads (LevelDB's included).
"Store bytes" = growth of data-dir/shards on disk over all rounds / files (per round in brackets: LevelDB writes a
block to its log first, then again to a table file when the memtable is flushed, so single rounds swing). "Read back" = \`read(cid)\` of the whole file, what serving it costs.

| per 1.2 MB file | by copy | by reference | ref / copy |
|---|---|---|---|
${row('add: CPU', 'cpu', 'ms')}
${row('add: wall time', 'wall', 'ms')}
${(() => { const f = kb('bytes'); const c = total.copy / 1000; const r = total.ref / 1000; return `| add: store bytes on disk (all rounds) | ${c.toFixed(1)} kB (${f.copy.bytes.map(x => x.toFixed(1)).join(', ')}) | ${r.toFixed(1)} kB (${f.ref.bytes.map(x => x.toFixed(1)).join(', ')}) | ${(r / c).toFixed(4)} |` })()}
${row('read back (serve): CPU', 'readCpu', 'ms')}

Reading: by reference the add is one read of the file and sha256 per block (the same hashing a copy needs) and a
few hundred bytes of references; the copy also writes every block into LevelDB (WAL, memtable, flush). Serving a
by-reference block costs a file read and a sha256 each time (the check that the file has not changed), where a copy is
served as stored: worth it when a checkpoint is fetched a few times at most, as checkpoints are.
`
writeSection('Shards: add by reference', body)
console.log(body)
