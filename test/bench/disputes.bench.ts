// Disputes: per-dispute messages, on-chain transactions and bytes, claim bytes
// and adjudication time (from the fault-injection matrix, test/unit/dispute),
// and dispute wall time between real processes, against the figures of the
// protocol that recorded every move on chain (record_move). Verification
// overhead: verification.bench.ts. Plain script over dist/ (npm run bench -- disputes).
import '../../node/polyfill.js'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './report.js'

// The record_move protocol, as measured by this bench before moves went off chain (docs/benchmarks.md
// history): moves per dispute of the same matrix, and the tamper-op dispute between processes.
const BEFORE = {
  sgd: { movesMax: 25, movesMean: 21.3 }, adam: { movesMax: 37, movesMean: 23.0 }, claimMax: 10975, swarm: { moves: 27, blocks: 30, blockMs: 300, wallMs: 9000 }
}
// one signed record_move extrinsic: compact length 2, version 1, MultiAddress::Id 33, MultiSignature 65,
// era + nonce + tip 3, call index 2, dispute_id u64 8, move_hash H256 32
const RECORD_MOVE_BYTES = 2 + 1 + 33 + 65 + 3 + 2 + 8 + 32
// the envelope of any signed extrinsic (all of the above but the call's arguments), and open_dispute's arguments
const ENVELOPE_BYTES = 2 + 1 + 33 + 65 + 3 + 2
const OPEN_BYTES = ENVELOPE_BYTES + 8 + 32 + 1 + 4

const dir = mkdtempSync(join(tmpdir(), 'ps-dispute-bench-'))
try {
  // 1. the matrix, with figures
  const figFile = join(dir, 'figures.json')
  const t0 = Date.now()
  const r = spawnSync('npx', ['vitest', 'run', 'test/unit/dispute'], { env: { ...process.env, DISPUTE_FIGURES: figFile }, stdio: 'inherit' })
  if (r.status !== 0) throw new Error('the dispute matrix failed')
  const matrixSec = (Date.now() - t0) / 1000
  const figs = JSON.parse(readFileSync(figFile, 'utf8'))
  const by = (opt: string): any[] => figs.filter((f: any) => f.opt === opt)
  const max = (xs: any[], k: string): number => Math.max(...xs.map(x => x[k]))
  const mean = (xs: any[], k: string): number => xs.reduce((s, x) => s + x[k], 0) / xs.length
  const rows = figs.map((f: any) => `| ${f.opt} | ${f.kernel} (entry ${f.entry}/${f.entries}) | ${f.kind} | ${f.moves} (≤ ${f.bound}) | ${f.txs} | ${f.claimBytes} | ${f.adjudicateMs.toFixed(2)} |`)
  if (figs.some((f: any) => f.txs !== 2)) throw new Error('a cooperative dispute of the matrix sent other than two transactions')
  // on-chain bytes of one dispute: before, every message was a record_move next to the opening and the claim
  const chainBefore = (f: any): number => OPEN_BYTES + f.moves * RECORD_MOVE_BYTES + ENVELOPE_BYTES + 8 + 4 + f.claimBytes
  const chainAfter = (f: any): number => OPEN_BYTES + ENVELOPE_BYTES + 8 + 4 + f.claimBytes
  for (const f of figs) { f.chainBefore = chainBefore(f); f.chainAfter = chainAfter(f) }

  // 1b. dispute wall time over libp2p between real processes (issue 7's node side)
  const sw = spawnSync('npx', ['vitest', 'run', 'test/integration/dispute-swarm.test.ts'], { encoding: 'utf8', maxBuffer: 64 << 20 })
  if (sw.status !== 0) throw new Error(`the dispute swarm test failed:\n${sw.stdout.slice(-4000)}`)
  const swarm = Object.fromEntries(sw.stdout.split('\n').filter(l => l.includes('DISPUTE-FIGURES {')).map(l => JSON.parse(l.slice(l.indexOf('{')))).map(f => [f.scenario, f]))
  const tamper = swarm['tamper-op']; const silent = swarm.silent
  const all = figs
  if (tamper == null || silent == null) throw new Error('the dispute swarm test printed no figures')

  writeSection('Disputes', `
Machine: ${machine()}. Run: \`npm run bench -- disputes\` (test/bench/disputes.bench.ts).

### Before and after: moves off chain (force-move)

Until this version every bisection message was recorded on chain as a hash (\`record_move\`, one transaction each) and its bytes went over libp2p. Now messages stay off chain; the chain sees \`open_dispute\` and the claim, plus a \`force_move\`/\`answer_move\` pair only for a move a party had to force (docs/disputes.md, "Moves off chain, force on silence"). Same matrix, same tapes; "before" = this bench's figures for the \`record_move\` protocol.

| per dispute | before (\`record_move\`) | after (force-move), cooperative |
|---|---|---|
| dispute transactions, sgd (${by('sgd').length} kinds) | ${BEFORE.sgd.movesMax + 2} max / ${(BEFORE.sgd.movesMean + 2).toFixed(1)} mean (open + ${BEFORE.sgd.movesMax} moves + claim) | **${max(by('sgd'), 'txs')}** (open + claim) |
| dispute transactions, adam (${by('adam').length} kinds) | ${BEFORE.adam.movesMax + 2} max / ${(BEFORE.adam.movesMean + 2).toFixed(1)} mean | **${max(by('adam'), 'txs')}** |
| messages exchanged | ${BEFORE.adam.movesMax} max, all on chain | ${max(all, 'moves')} max / ${mean(all, 'moves').toFixed(1)} mean, none on chain |
| on-chain bytes (extrinsics) | ${max(all, 'chainBefore')} max / ${mean(all, 'chainBefore').toFixed(0)} mean | ${max(all, 'chainAfter')} max / ${mean(all, 'chainAfter').toFixed(0)} mean |
| claim bytes | ≤ ${BEFORE.claimMax} | ${max(all, 'claimBytes')} max / ${mean(all, 'claimBytes').toFixed(0)} mean (unchanged but for \`seq\`/\`prev\` in the signed messages it carries) |
| tamper-op dispute between processes | ${BEFORE.swarm.moves} moves on chain, ${BEFORE.swarm.blocks} blocks of ${BEFORE.swarm.blockMs} ms, ${(BEFORE.swarm.wallMs / 1000).toFixed(1)} s | **${tamper.txs} transactions (${tamper.txBytes} bytes), ${tamper.blocks} blocks of ${tamper.blockMs} ms, ${(tamper.wallMs / 1000).toFixed(1)} s** |

The devnet's forced-error scenario (\`npx vite-node test/bench/devnet-disputes.ts 500\`, run separately: 6 peers, a synthetic 40-step MLP task, 500 ms blocks, every block read): both disputes of the forced step (verifier, whistleblower) were exactly \`open_dispute\` + \`adjudicate\`, 11,579 bytes each, ruled 2 blocks (1.0 s) and 1 block (0.5 s) after their opening (docs/disputes.md, "On the devnet", has the earlier runs: up to 19 blocks before the challenger announced the step to the defender).

On-chain bytes are the signed extrinsics: ${RECORD_MOVE_BYTES} bytes per \`record_move\` (envelope ${ENVELOPE_BYTES} + dispute id + hash), ${OPEN_BYTES} for \`open_dispute\`, the claim plus ${ENVELOPE_BYTES + 12} for \`adjudicate\`; the process figure is read from the blocks. A forced move costs \`force_move\` (both messages in full: a few hundred bytes, a slice up to its 2 KiB leaf) and \`answer_move\` (the answer in full); the fault tests measure it: a defender that answers every force on chain but never off chain costs 2 transactions per defender message (test/unit/dispute/game.test.ts).

### Per dispute (fault-injection matrix, MLP 784-128-10, batch 4, every kernel kind tampered)

The matrix (${figs.length} disputes + the fault cases) ran in ${matrixSec.toFixed(1)} s including taping. Messages = signed messages exchanged off chain by both parties; the bound is 2 × (⌈log2 steps⌉ + ⌈log2 entries⌉ + ⌈log2 output elements⌉ + 6). Transactions = dispute extrinsics including the opening. Claim bytes = the \`adjudicate\` argument; time = the whole \`adjudicate\` extrinsic on the pure runtime (decode, signature, Merkle proofs, one element).

| optimizer | messages max / mean | claim bytes max / mean | adjudicate ms max / mean |
|---|---|---|---|
| sgd (${by('sgd').length} kinds) | ${max(by('sgd'), 'moves')} / ${mean(by('sgd'), 'moves').toFixed(1)} | ${max(by('sgd'), 'claimBytes')} / ${mean(by('sgd'), 'claimBytes').toFixed(0)} | ${max(by('sgd'), 'adjudicateMs').toFixed(2)} / ${mean(by('sgd'), 'adjudicateMs').toFixed(2)} |
| adam (${by('adam').length} kinds) | ${max(by('adam'), 'moves')} / ${mean(by('adam'), 'moves').toFixed(1)} | ${max(by('adam'), 'claimBytes')} / ${mean(by('adam'), 'claimBytes').toFixed(0)} | ${max(by('adam'), 'adjudicateMs').toFixed(2)} / ${mean(by('adam'), 'adjudicateMs').toFixed(2)} |

On-chain compute per dispute is one op element (\`computeElement\`) or, for the other claim kinds, hashing (≤ 2 slices, ≤ 3 Merkle paths, one sr25519 signature check); the batch-row claim also recomputes the epoch permutation (O(dataset rows)).

<details><summary>every disputed kernel</summary>

| optimizer | tampered op | claim | messages (bound) | transactions | claim bytes | adjudicate ms |
|---|---|---|---|---|---|---|
${rows.join('\n')}
</details>

Dispute wall time over libp2p (test/integration/dispute-swarm.test.ts: chain, bootstrap, submitter, solver and verifier as separate processes on 127.0.0.1, dev chain at ${tamper.blockMs} ms blocks, synthetic MLP task with Adam, 20 steps): a solver with \`--fault tamper-op=BatchMatMul@8\`, caught by the verifier — **${(tamper.wallMs / 1000).toFixed(1)} s** from \`DisputeOpened\` to \`DisputeResolved\` (${tamper.blocks} blocks; ${tamper.txs} dispute transactions, ${tamper.txBytes} bytes; the off-chain bisection and an \`element\` claim included, the defender having taped the step the verifier announced before opening); submission to the dispute's end ${(tamper.totalMs / 1000).toFixed(1)} s. A silent solver is forced (its commit demanded on chain after the verifier's 20 s of patience) and loses by \`claim_timeout\` after ${(silent.wallMs / 1000).toFixed(1)} s (${silent.blocks} blocks: 20 s, the 40-block window and the tape allowance).

Verification overhead vs detection: section "Verification overhead vs detection" (test/bench/verification.bench.ts).
`)
  console.log('docs/benchmarks.md: Disputes section written')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
