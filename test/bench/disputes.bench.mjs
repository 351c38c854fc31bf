// Disputes: per-dispute rounds, on-chain claim bytes and adjudication time
// (from the fault-injection matrix, test/unit/dispute), and verification
// overhead vs detection probability measured against plain local training of
// the same task. Plain node script over dist/ (npm run bench -- disputes).
import '../../dist/node/polyfill.js'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './report.mjs'
import { newProgram } from '../../dist/protocols/program/index.js'
import { datasetRef, syntheticDataset } from '../../dist/node/train/dataset.js'
import { trainTask, replayStep } from '../../dist/node/train/run.js'
import { intervalsForDetection } from '../../dist/protocols/verification/sample.js'

const dir = mkdtempSync(join(tmpdir(), 'ps-dispute-bench-'))
try {
  // 1. the matrix, with figures
  const figFile = join(dir, 'figures.json')
  const t0 = Date.now()
  const r = spawnSync('npx', ['vitest', 'run', 'test/unit/dispute'], { env: { ...process.env, DISPUTE_FIGURES: figFile }, stdio: 'inherit' })
  if (r.status !== 0) throw new Error('the dispute matrix failed')
  const matrixSec = (Date.now() - t0) / 1000
  const figs = JSON.parse(readFileSync(figFile, 'utf8'))
  const by = (opt) => figs.filter(f => f.opt === opt)
  const max = (xs, k) => Math.max(...xs.map(x => x[k]))
  const mean = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length
  const rows = figs.map(f => `| ${f.opt} | ${f.kernel} (entry ${f.entry}/${f.entries}) | ${f.kind} | ${f.moves} (≤ ${f.bound}) | ${f.claimBytes} | ${f.adjudicateMs.toFixed(2)} |`)

  // 1b. dispute wall time over libp2p between real processes (issue 7's node side)
  const sw = spawnSync('npx', ['vitest', 'run', 'test/integration/dispute-swarm.test.ts'], { encoding: 'utf8', maxBuffer: 64 << 20 })
  if (sw.status !== 0) throw new Error(`the dispute swarm test failed:\n${sw.stdout.slice(-4000)}`)
  const swarm = Object.fromEntries(sw.stdout.split('\n').filter(l => l.includes('DISPUTE-FIGURES {')).map(l => JSON.parse(l.slice(l.indexOf('{')))).map(f => [f.scenario, f]))
  const tamper = swarm['tamper-op']; const silent = swarm.silent
  if (tamper == null || silent == null) throw new Error('the dispute swarm test printed no figures')

  // 2. verification overhead vs detection: plain training vs replaying sampled intervals
  const ds = syntheticDataset(3, 4096, 256)
  const steps = 400; const k = 10; const batch = 32
  const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps, optimizer: 'sgd', batchSize: batch, seed: 5, checkpointEvery: k })
  const plain = await trainTask({ program, dataset: ds, outDir: join(dir, 'plain'), verifiable: false, evaluate: false, backend: 'wasm' })
  const verif = await trainTask({ program, dataset: ds, outDir: join(dir, 'run'), evaluate: false, backend: 'wasm' })
  const plainStep = plain.seconds / steps
  // one interval replay: load checkpoint, re-run k steps, compare k roots (in-process, as the verifier's child does)
  const reps = []
  for (const to of [k * 3, k * 17, k * 31]) { const t = performance.now(); const rr = await replayStep({ proofDir: join(dir, 'run'), step: to }); if (!rr.match) throw new Error('replay mismatch'); reps.push((performance.now() - t) / 1000) }
  const interval = reps.reduce((a, b) => a + b, 0) / reps.length
  const table = []
  let firstOk

  for (const S of [400, 2000, 10000]) {
    for (const f of [0.05, 0.1, 0.2]) {
      for (const p of [0.99, 0.999]) {
        const n = Math.min(intervalsForDetection(f, k, 1 - p), Math.ceil(S / k))
        const overhead = n * interval / (S * plainStep)
        if (f === 0.1 && p === 0.99 && overhead <= 0.25 && firstOk === undefined) firstOk = S
        table.push(`| ${S} | ${(f * 100).toFixed(0)}% | ${(p * 100).toFixed(1)}% | ${n} × ${k} | ${(overhead * 100).toFixed(1)}% |`)
      }
    }
  }
  writeSection('Disputes', `
Machine: ${machine()}. Run: \`npm run bench -- disputes\` (test/bench/disputes.bench.mjs).

### Per dispute (fault-injection matrix, MLP 784-128-10, batch 4, every kernel kind tampered)

The matrix (${figs.length} disputes + the fault cases) ran in ${matrixSec.toFixed(1)} s including tracing. Moves = messages recorded on chain by both parties (each is one \`record_move\`); the bound is 2 × (⌈log2 steps⌉ + ⌈log2 entries⌉ + ⌈log2 output elements⌉ + 6). Claim bytes = the \`adjudicate\` argument; time = the whole \`adjudicate\` extrinsic on the pure runtime (decode, signature, Merkle proofs, one element).

| optimizer | moves max / mean | claim bytes max / mean | adjudicate ms max / mean |
|---|---|---|---|
| sgd (${by('sgd').length} kinds) | ${max(by('sgd'), 'moves')} / ${mean(by('sgd'), 'moves').toFixed(1)} | ${max(by('sgd'), 'claimBytes')} / ${mean(by('sgd'), 'claimBytes').toFixed(0)} | ${max(by('sgd'), 'adjudicateMs').toFixed(2)} / ${mean(by('sgd'), 'adjudicateMs').toFixed(2)} |
| adam (${by('adam').length} kinds) | ${max(by('adam'), 'moves')} / ${mean(by('adam'), 'moves').toFixed(1)} | ${max(by('adam'), 'claimBytes')} / ${mean(by('adam'), 'claimBytes').toFixed(0)} | ${max(by('adam'), 'adjudicateMs').toFixed(2)} / ${mean(by('adam'), 'adjudicateMs').toFixed(2)} |

On-chain compute per dispute is one op element (\`computeElement\`) or, for the other claim kinds, hashing (≤ 2 slices, ≤ 3 Merkle paths, one sr25519 signature check); the batch-row claim also recomputes the epoch permutation (O(dataset rows)).

<details><summary>every disputed kernel</summary>

| optimizer | tampered op | claim | moves (bound) | claim bytes | adjudicate ms |
|---|---|---|---|---|---|
${rows.join('\n')}
</details>

Dispute wall time over libp2p (test/integration/dispute-swarm.test.ts: chain, bootstrap, submitter, solver and verifier as separate processes on 127.0.0.1, dev chain at ${tamper.blockMs} ms blocks, synthetic MLP task with Adam, 20 steps): a solver with \`--fault tamper-op=BatchMatMul@8\`, caught by the verifier — **${(tamper.wallMs / 1000).toFixed(1)} s** from \`DisputeOpened\` to \`DisputeResolved\` (${tamper.moves} moves recorded on chain, ${tamper.blocks} blocks; both trace children and an \`element\` claim included); submission to the dispute's end ${(tamper.totalMs / 1000).toFixed(1)} s. A silent solver loses by \`claim_timeout\` after ${(silent.wallMs / 1000).toFixed(1)} s (${silent.blocks} blocks, 40-block clock).

### Verification overhead vs detection

Plain local training of the same task (MLP, SGD, batch ${batch}, synthetic data, wasm): ${(plainStep * 1000).toFixed(2)} ms/step; verifiable training (state root every step + checkpoints every ${k}): ${(verif.seconds / steps * 1000).toFixed(2)} ms/step (solver side, ${(((verif.seconds / plain.seconds) - 1) * 100).toFixed(0)}%). Replaying one interval of ${k} steps from its checkpoint (what a verifier does per sampled interval, in-process): ${(interval * 1000).toFixed(0)} ms (mean of ${reps.length}). A solver faking a fraction f of its steps at random escapes n intervals with probability (1-f)^(k·n) (protocols/verification/sample.ts); overhead = n × interval replay / plain training time of the whole task, for one verifier.

| task steps | faked share | detection | intervals × k | verification overhead |
|---|---|---|---|---|
${table.join('\n')}

Goal ≤ 25% at ≥ 99% detection of faking ≥ 10%: the sample (${intervalsForDetection(0.1, k, 0.01)} intervals of ${k} steps) does not grow with the task, so the overhead falls as 1/steps: ${firstOk !== undefined ? `met from the ${firstOk}-step row on` : 'not met in this table'}; not for short tasks (${steps} steps here), where the sample is a large share of the run and each interval pays a fixed checkpoint-load/trainer-setup cost (${(interval * 1000).toFixed(0)} ms per interval vs ${(k * plainStep * 1000).toFixed(0)} ms for ${k} plain steps).
`)
  console.log('docs/benchmarks.md: Disputes section written')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
