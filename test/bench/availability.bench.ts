// Data availability: detection of withheld chunks by sampling through the
// chain, and what erasure coding costs. npm run bench -- availability
//   detection: test/adversarial/chunk-detection.test.ts with more trials: the
//     devnet's task (MLP, Adam, batch 64) trained on Fashion-MNIST, its last
//     checkpoint coded into 256 chunks, a solver withholding a fraction of
//     them on the real runtime, one chain sample request per trial
//   coding cost: Reed–Solomon encode and decode of that checkpoint, next to
//     one plain training step of the same task
import '../../node/polyfill.js'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './report.js'
import { overheadBench } from './availability-overhead.js'
import { fromDist } from './ts-script.js'
const { encodeChunks, decodeChunks } = await fromDist<typeof import('../../protocols/erasure/coder.js')>('protocols/erasure/coder.js')
const { CHUNK_SAMPLES, missProbability, missProbabilityIndependent } = await fromDist<typeof import('../../protocols/erasure/index.js')>('protocols/erasure/index.js')

const TRIALS = Number(process.env.AVAILABILITY_TRIALS ?? 1000)
const dir = mkdtempSync(join(tmpdir(), 'ps-availability-'))
const pct = (x: number, d = 2): string => `${(100 * x).toFixed(d)}%`
try {
  const out = join(dir, 'figures.json')
  const r = spawnSync('npx', ['vitest', 'run', 'test/adversarial/chunk-detection.test.ts'], { env: { ...process.env, AVAILABILITY_TRIALS: String(TRIALS), AVAILABILITY_FIGURES: out }, stdio: 'inherit' })
  if (r.status !== 0) throw new Error('the detection run failed: a withholding solver passed more often than the sampling allows, or the chain disagreed with the draw')
  const f = JSON.parse(readFileSync(out, 'utf8'))
  const p = f.params
  const rows = f.figures.map((x: any) => `| ${pct(x.fraction, 0)} | ${x.withheld} / ${x.total} | ${x.caught} / ${x.trials} | **${pct(x.rate)}** | ${pct(x.expected)} | ${pct(1 - missProbabilityIndependent(x.fraction, CHUNK_SAMPLES))} | ${x.blocksPerTrial.toFixed(1)} |`).join('\n')

  // coding cost of one such checkpoint (same size), median of 5
  const data = new Uint8Array(p.dataBytes)
  for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const enc = []; const dec = []; const decFast = []
  let chunks
  for (let t = 0; t < 5; t++) {
    let t0 = performance.now(); chunks = encodeChunks(data).chunks; enc.push(performance.now() - t0)
    const parityOnly = chunks.map((c, i) => i >= p.dataShards ? c : undefined)
    t0 = performance.now(); decodeChunks(p.dataBytes, parityOnly); dec.push(performance.now() - t0)
    t0 = performance.now(); decodeChunks(p.dataBytes, chunks.map((c, i) => i < p.dataShards ? c : undefined)); decFast.push(performance.now() - t0)
  }
  // honest verification overhead, with and without the chunk work, in this run
  const o = process.env.AVAILABILITY_OVERHEAD === '0' ? undefined : await overheadBench(join(dir, 'overhead'))
  if (o !== undefined) console.log(JSON.stringify(o))
  const overhead = o === undefined
    ? ''
    : `
**Honest verification overhead** (same run; the devnet's task: ${o.steps} steps, k = ${o.k}, ${o.checkpoints} checkpoints, ${o.dataset}; 2 verifiers, mean of ${o.trials} samples each): plain training ${o.plainCpu.toFixed(1)} s CPU. Per verifier: replay of its sample in the warm engine ${o.replayCpu.toFixed(2)} s, fetching the ${o.loads.toFixed(1)} checkpoints it loads from the solver ${o.transferCpu.toFixed(2)} s (fetch + serve, both in this process), and what erasure coding adds — the codings checked against the coded root and ${CHUNK_SAMPLES} chunks of one loaded checkpoint sampled from the solver (chunk list + chunks, each checked against its leaf hash) — ${(1000 * o.chunkCpu).toFixed(0)} ms.

| | 2 verifiers' CPU / plain training CPU |
|---|---|
| before (replay + checkpoint transfer) | ${pct(o.before, 1)} |
| **after (+ coded-root check + chunk sample)** | **${pct(o.after, 1)}** |

The solver codes its ${o.checkpoints} checkpoints once before committing: ${o.codingCpu.toFixed(1)} s CPU (${pct(o.codingCpu / o.plainCpu, 0)} of plain training; verifiable training itself was ${o.verifCpu.toFixed(1)} s). A verifier decodes only a checkpoint it cannot fetch whole (not in the honest case).
`
  const load = loadavg().map(x => x.toFixed(2)).join(' ')
  const body = `
Machine: ${machine()}, load ${load}. Run: \`npm run bench -- availability\` (test/bench/availability.bench.ts over test/adversarial/chunk-detection.test.ts, ${TRIALS} trials per fraction).

The devnet's task (MLP 784-128-10, Adam, batch 64) trained on Fashion-MNIST; its checkpoint of step 10 (${(p.dataBytes / 2 ** 20).toFixed(2)} MiB) coded into ${p.total} chunks of ${p.chunkBytes} B (k = ${p.dataShards} data + m = ${p.parityShards} parity, rate 1/2). Per trial the solver withholds a fresh random set of chunks, a whistleblower calls \`sample_chunks\` on the real runtime (the dev chain's pallet, in process), and the solver posts the ${CHUNK_SAMPLES} drawn chunks if it has them all; otherwise the request times out and the solver is slashed. Caught = timed out; the chain's outcome matched the drawn indices in every trial.

| withheld | chunks | caught | detection | exact 1 − C(n−w,s)/C(n,s) | bound 1 − (1−w)^s | blocks / trial |
|---|---|---|---|---|---|---|
${rows}

A solver must withhold more than ${p.parityShards} of the ${p.total} chunks (over 50%) to make the checkpoint unrecoverable; that is caught with probability ≥ 1 − ${missProbability(p.total, p.parityShards + 1, CHUNK_SAMPLES).toExponential(1)} per request.

Coding cost of one checkpoint of this size (median of 5, this machine): encode ${med(enc).toFixed(0)} ms (solver, once per checkpoint before commit_proof; the ${f.checkpoints} checkpoints of the trained run took ${f.codingMs.toFixed(0)} ms with hashing and writing), decode from the ${p.parityShards} parity chunks only ${med(dec).toFixed(0)} ms, from the ${p.dataShards} data chunks ${med(decFast).toFixed(1)} ms (a copy: the code is systematic). A verifier decodes only when it cannot fetch state.bin whole.
${overhead}`
  console.log(body)
  writeSection('Data availability', body)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
