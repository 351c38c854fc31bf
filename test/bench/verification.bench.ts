// Verification overhead vs detection (issue 7's goal: ≤ 25% overhead at ≥ 99%
// detection of a solver faking ≥ 10% of its steps), measured with what the
// devnet's peers run, on the devnet's task (Fashion-MNIST MLP, Adam, batch 64):
//   plain local training = `proofswarm train --plain` (a process, start to exit)
//   one verifier's work  = the replay of its sample in the verifier peer's warm
//                          engine (node/engine/engine-server.ts, already started:
//                          a verifier peer keeps it between tasks and warms it
//                          while checkpoints download), and, for comparison, a
//                          cold `proofswarm replay --steps …` process per task
// Wall time and CPU time (all threads) are both reported; CPU time is what the
// network pays and is less disturbed by other jobs on this shared machine.
// Detection is checked for real against a solver that fakes one contiguous
// block of 10% of its steps.
// Plain script over dist/ (npm run bench -- verification); the solver child runs in node alone,
// with the peer heap settings, as a solver peer does.
import '../../node/polyfill.js'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { machine, writeSection } from './report.js'
import { fromDist, nativeScriptArgs } from './ts-script.js'
const { createHost } = await fromDist<typeof import('../../node/p2p/host.js')>('node/p2p/host.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')
const { ShardService } = await fromDist<typeof import('../../node/shards/service.js')>('node/shards/service.js')
const { DETECTION_GOAL, checkpointLoads, missProbability, recommendedCheckpointEvery, replaysFor, sampleSteps } = await fromDist<typeof import('../../protocols/verification/sample.js')>('protocols/verification/sample.js')
const { requiredSampleCount } = await fromDist<typeof import('../../protocols/verification/verdict.js')>('protocols/verification/verdict.js')
const { WarmEngine } = await fromDist<typeof import('../../node/engine/warm-engine.js')>('node/engine/warm-engine.js')
const { tunePeerHeap } = await fromDist<typeof import('../../node/cli/peer-heap.js')>('node/cli/peer-heap.js')

// this process fetches checkpoints as a verifier peer does, its 'solver' child serves them
// as a solver peer does: both with the V8 heap settings of `proofswarm join`
tunePeerHeap()

const CLI = join('dist', 'node', 'cli', 'main.js')
const quiet = createLogger('bench', { level: 'silent', pretty: false })
async function shardPeer (dataDir: string) {
  const host = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })
  return { host, svc: await ShardService.start({ host, dataDir, log: quiet, gcIntervalMs: 0 }) }
}

if (process.argv[2] === 'solver') {
  // child: a solver's shard service publishing a run's checkpoints as the node does (by reference, no DHT records)
  const [, , , dataDir, runDir] = process.argv
  const { host, svc } = await shardPeer(dataDir)
  const cks: Record<number, { manifest: string, data: string }> = {}
  for (const d of readdirSync(join(runDir, 'checkpoints')).sort()) {
    const step = Number(d.replace('step-', ''))
    const add = async (f: string): Promise<string> => (await svc.addFile(join(runDir, 'checkpoints', d, f), { name: `${d}-${f}`, kind: 'checkpoint' }, { byReference: true, provide: false })).cid
    cks[step] = { manifest: await add('manifest.json'), data: await add('state.bin') }
  }
  process.stdout.write(JSON.stringify({ peerId: host.peerId.toString(), addr: host.getMultiaddrs()[0].toString(), cks }) + '\n')
  process.stdin.resume()
  process.stdin.on('end', () => { void svc.stop().then(() => host.stop()).then(() => process.exit(0)) })
}

const FASHION = '/usr/share/datasets/fashion-mnist'
const VERIFIERS = 2 // the devnet's and the default task's verifier count
const TRIALS = Number(process.env.VERIFY_BENCH_TRIALS ?? 3)
const DETECT_TRIALS = Number(process.env.VERIFY_BENCH_DETECT ?? 10)
const dataset = existsSync(join(FASHION, 'train-images-idx3-ubyte.gz')) || existsSync(join(FASHION, 'train-images-idx3-ubyte')) ? FASHION : 'synthetic'
const data = dataset === FASHION ? ['--dataset-dir', FASHION] : []
const TICK = 100 // USER_HZ on Linux

/** CPU seconds (user + system) of this process's waited-for children, or of process `pid` (all its threads). */
function cpuOf (pid?: number): number {
  const s = readFileSync(`/proc/${pid ?? 'self'}/stat`, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  // fields 14–17 of proc(5): utime, stime, cutime, cstime → indices 11–14 here
  return pid == null ? (Number(f[13]) + Number(f[14])) / TICK : (Number(f[11]) + Number(f[12])) / TICK
}

function cli (args: string[]): { wall: number, cpu: number, json: any, status: number | null } {
  const c0 = cpuOf()
  const t = performance.now()
  const r = spawnSync(process.execPath, [CLI, ...args, ...(args[0] === 'task' ? [] : ['--log-level', 'warn'])], { encoding: 'utf8', maxBuffer: 64 << 20 })
  const wall = (performance.now() - t) / 1000
  if (r.status !== 0 && r.status !== 2) throw new Error(`proofswarm ${args.join(' ')} failed (${r.status}):\n${r.stderr.slice(-3000)}`)
  const line = r.stdout.trim().split('\n').filter(l => l.startsWith('{')).pop()
  return { wall, cpu: cpuOf() - c0, json: line != null ? JSON.parse(line) : undefined, status: r.status }
}

const seedOf = (i: number): string => '0x' + (0x5eed0000 + i).toString(16).padStart(64, '0')
const acctOf = (v: number): string => '0x' + (0xacc00000 + v).toString(16).padStart(64, '0')
const engine = new WarmEngine(pino({ level: 'warn' }))

/** One verifier's sample of a run: the 1-based steps, the replays and checkpoints it needs. */
function sampleOf (runDir: string, steps: number, k: number, seed: string, v: number): { sampled: number[], loads: number, replayed: number } {
  const sampled = sampleSteps(seed, acctOf(v), steps, requiredSampleCount(VERIFIERS))
  const proof = JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8'))
  const loads = checkpointLoads(sampled, proof.checkpoints.map((c: { step: number }) => c.step))
  const replayed = replaysFor(sampled, steps, k).reduce((n, x) => n + (x.toStep - x.fromStep), 0)
  return { sampled, loads: loads.length, replayed }
}

const caughtIn = (results: Array<{ match: boolean, firstMismatch?: unknown }>): boolean => results.some(x => !x.match || x.firstMismatch != null)

/** The replay in the warm engine: wall and engine CPU seconds. */
async function warmRun (runDir: string, sampled: number[]): Promise<{ wall: number, cpu: number, caught: boolean }> {
  const c0 = cpuOf(engine.pid)
  const t = performance.now()
  // as node/roles/verifier-ports.ts verify: checkpoints laid out by the program (a verifier fetches only their data)
  const out = await engine.replay(runDir, sampled, dataset === FASHION ? FASHION : undefined, undefined, 'program')
  const wall = (performance.now() - t) / 1000
  if (out.unavailable != null) throw new Error(`checkpoint ${out.unavailable.step} unusable: ${out.unavailable.reason}`)
  return { wall, cpu: cpuOf(engine.pid) - c0, caught: caughtIn(out.results) }
}

function coldRun (runDir: string, sampled: number[]): { wall: number, cpu: number, caught: boolean } {
  const r = cli(['replay', '--proof', runDir, '--steps', sampled.join(','), '--json', ...data])
  const results = r.json?.results ?? []
  if (results.length === 0) throw new Error(`replay printed no results: ${JSON.stringify(r.json)}`)
  return { wall: r.wall, cpu: r.cpu, caught: caughtIn(results) }
}

function runBytes (runDir: string): number {
  const d = join(runDir, 'checkpoints')
  return readdirSync(d).reduce((n, c) => n + statSync(join(d, c, 'state.bin')).size, 0)
}

const dir = process.argv[2] === 'solver' ? undefined : mkdtempSync(join(tmpdir(), 'ps-verify-bench-'))
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length

/**
 * What fetching a verifier's checkpoints costs, as a verifier node does it
 * (fetchToFile from the solver's peer over libp2p on 127.0.0.1): CPU of the
 * fetching process and of the serving solver, per verifier sample.
 */
async function transferCost (dir: string, runDir: string, steps: number, k: number, trials: number) {
  const child = spawn(process.execPath, await nativeScriptArgs(fileURLToPath(import.meta.url), ['solver', join(dir, 'solver-shards'), runDir]), { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise(resolve => child.on('exit', resolve))
  const me = await shardPeer(join(dir, 'verifier-shards'))
  try {
    const info = JSON.parse(await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve)
      child.once('exit', code => reject(new Error(`solver process exited (${code})`)))
    }))
    await me.host.dial(multiaddr(info.addr))
    const out: Array<{ fetchCpu: number, serveCpu: number, wall: number, checkpoints: number }> = []
    for (let t = -1; t < trials; t++) {
      for (let v = 0; v < VERIFIERS; v++) {
        const s = sampleOf(runDir, steps, k, seedOf(700 + t), v)
        const proof = JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8'))
        const loads = checkpointLoads(s.sampled, proof.checkpoints.map((c: { step: number }) => c.step))
        const dest = join(dir, `fetched-${t}-${v}`)
        const c0 = process.cpuUsage(); const p0 = cpuOf(child.pid); const w0 = performance.now()
        for (const step of loads) {
          const d = join(dest, String(step)); mkdirSync(d, { recursive: true })
          // as node/roles/verifier-checks.ts fetchCheckpoint: the data only (the engine lays it out by the
          // program and checks it by the replayed roots), no sha256 of the file
          await me.svc.fetchToFile(info.cks[step].data, join(d, 'state.bin'), { providers: [info.peerId], provide: false, contentHash: false })
        }
        const u = process.cpuUsage(c0)
        // the first round warms the connection and the JIT: not counted
        if (t >= 0) out.push({
          fetchCpu: (u.user + u.system) / 1e6, serveCpu: cpuOf(child.pid) - p0, wall: (performance.now() - w0) / 1000, checkpoints: loads.length
        })
      }
    }
    return {
      fetchCpu: mean(out.map(o => o.fetchCpu)), serveCpu: mean(out.map(o => o.serveCpu)),
      wall: mean(out.map(o => o.wall)), checkpoints: mean(out.map(o => o.checkpoints))
    }
  } finally {
    child.stdin.end()
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    await me.svc.stop(); await me.host.stop()
  }
}

if (dir !== undefined) try {
  type Row = Record<string, any>
  const rows: Row[] = []
  let devnetRow: Row | undefined
  const configs: Array<[number, number]> = [
    [400, recommendedCheckpointEvery(400)], [1000, 10], [1000, recommendedCheckpointEvery(1000)], [2000, recommendedCheckpointEvery(2000)]
  ]
  for (const [steps, k] of configs) {
    const task = join(dir, `task-${steps}-${k}.json`)
    cli(['task', 'new', '--model', 'mlp', '--dataset', dataset, '--steps', String(steps), '--batch', '64', '--checkpoint-every', String(k), '--root-every', '1', '--optimizer', 'adam', '--out', task])
    const plain = cli(['train', '--task', task, '--out', join(dir, `plain-${steps}-${k}`), '--plain', '--no-evaluate', '--json', ...data])
    const run = join(dir, `run-${steps}-${k}`)
    const verif = cli(['train', '--task', task, '--out', run, '--no-evaluate', '--json', ...data])
    if (verif.json?.proofWritten !== true) throw new Error(`no proof for the ${steps}-step task`)
    // the verifier peer's engine is warm before its first replay (as in a peer, which warms it while checkpoints download)
    await engine.warm(join(run, 'task.json'), dataset === FASHION ? FASHION : undefined)
    const warm: Array<{ wall: number, cpu: number, caught: boolean }> = []
    const cold: Array<{ wall: number, cpu: number, caught: boolean }> = []
    const shapes: Array<{ sampled: number[], loads: number, replayed: number }> = []
    for (let t = 0; t < TRIALS; t++) {
      for (let v = 0; v < VERIFIERS; v++) {
        const s = sampleOf(run, steps, k, seedOf(t), v)
        shapes.push(s)
        warm.push(await warmRun(run, s.sampled))
        if (t === 0) cold.push(coldRun(run, s.sampled))
      }
    }
    if ([...warm, ...cold].some(p => p.caught)) throw new Error('an honest proof was rejected')
    const n = requiredSampleCount(VERIFIERS)
    const faked = Math.ceil(DETECTION_GOAL.fakedShare * steps)
    const row: Row = {
      steps, k, n, checkpoints: Math.ceil(steps / k), ckMiB: runBytes(run) / 2 ** 20,
      plainWall: plain.wall, plainCpu: plain.cpu, verifWall: verif.wall, verifCpu: verif.cpu,
      warmWall: mean(warm.map(p => p.wall)), warmCpu: mean(warm.map(p => p.cpu)),
      coldWall: mean(cold.map(p => p.wall)), coldCpu: mean(cold.map(p => p.cpu)),
      replayed: mean(shapes.map(p => p.replayed)), loads: mean(shapes.map(p => p.loads)),
      detection: 1 - missProbability(steps, faked, n) ** VERIFIERS
    }
    row.overWarmCpu = VERIFIERS * row.warmCpu / row.plainCpu
    row.overWarmWall = VERIFIERS * row.warmWall / row.plainWall
    row.overColdCpu = VERIFIERS * row.coldCpu / row.plainCpu
    row.overColdWall = VERIFIERS * row.coldWall / row.plainWall
    row.solverCpu = row.verifCpu / row.plainCpu - 1
    rows.push(row)
    if (steps === 1000 && k === recommendedCheckpointEvery(1000)) devnetRow = row
    console.log(JSON.stringify(row))
  }

  // fetching the checkpoints: the devnet's task, as a verifier node does it
  const devK = recommendedCheckpointEvery(1000)
  if (devnetRow === undefined) throw new Error('the devnet task was not measured')
  const transfer = await transferCost(dir, join(dir, `run-1000-${devK}`), 1000, devK, TRIALS)
  console.log(JSON.stringify({ transfer }))
  devnetRow.transfer = transfer
  devnetRow.overAll = VERIFIERS * (devnetRow.warmCpu + transfer.fetchCpu + transfer.serveCpu) / devnetRow.plainCpu

  // overhead vs detection on the devnet's task: larger or smaller samples per verifier
  const curve: Array<{ n: number, overhead: number, d5: number, d10: number, d20: number }> = []
  {
    const steps = 1000
    const k = recommendedCheckpointEvery(steps)
    const run = join(dir, `run-${steps}-${k}`)
    const plainCpu = devnetRow.plainCpu
    for (const n of [6, 11, 22, 33, 44]) {
      const cpu: number[] = []
      for (let t = 0; t < TRIALS; t++) {
        for (let v = 0; v < VERIFIERS; v++) {
          const sampled = sampleSteps(seedOf(500 + t), acctOf(v), steps, n)
          cpu.push((await warmRun(run, sampled)).cpu)
        }
      }
      const det = (f: number): number => 1 - missProbability(steps, Math.ceil(f * steps), n) ** VERIFIERS
      curve.push({ n, overhead: VERIFIERS * mean(cpu) / plainCpu, d5: det(0.05), d10: det(0.1), d20: det(0.2) })
      console.log(JSON.stringify(curve.at(-1)))
    }
  }

  // detection for real: a solver faking one contiguous block of 10% of the 1000-step task
  const steps = 1000
  const k = recommendedCheckpointEvery(steps)
  const block = Math.ceil(DETECTION_GOAL.fakedShare * steps)
  const start = 1 + 137 * 3 // any position; the sample does not depend on it
  const fakeRun = join(dir, 'faked')
  const ops: string[] = []
  for (let s = start; s < start + block; s++) ops.push('--fault-op', `BatchMatMul@${s}`)
  const fakedRun = cli(['train', '--task', join(dir, `task-1000-${k}.json`), '--out', fakeRun, '--no-evaluate', '--json', ...data, ...ops])
  if (fakedRun.json?.proofWritten !== true) throw new Error('the faking solver wrote no proof')
  let caught = 0
  for (let t = 0; t < DETECT_TRIALS; t++) {
    const hits: boolean[] = []
    for (let v = 0; v < VERIFIERS; v++) hits.push((await warmRun(fakeRun, sampleOf(fakeRun, steps, k, seedOf(1000 + t), v).sampled)).caught)
    if (hits.some(Boolean)) caught++
  }
  const load = loadavg().map(x => x.toFixed(2)).join(' ')

  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`
  const met = rows.filter(r => r.overWarmCpu <= 0.25 && r.detection >= 0.99)
  writeSection('Verification overhead vs detection', `
Machine: ${machine()}; load average at the end ${load}. Run: \`npm run bench -- verification\` (test/bench/verification.bench.ts), dataset: ${dataset === FASHION ? 'Fashion-MNIST' : 'synthetic (Fashion-MNIST not installed)'}.

**Sampling rule** (protocols/verification/sample.ts): each verifier draws n distinct steps from chain randomness it could not steer (the hash of the block after the proof's commit, mixed with its account), and for every sampled step s replays from the checkpoint before it (or on from the previous sample, when that is at or after the checkpoint) up to s, comparing the state roots at s − 1 and s (node/train/replay-many.ts). Every sampled transition is itself re-executed, so a solver faking *any* set of ≥ 10% of its steps escapes one verifier with probability ≤ 0.9ⁿ whatever their placement; ${VERIFIERS} verifiers sample independently, so n = ⌈log 0.01 / log 0.9⌉ / ${VERIFIERS} = ${requiredSampleCount(VERIFIERS)} each reach 99%, and the chain refuses an accepting verdict that does not list the verifier's own sample (SampleNotChecked).

**Task**: the devnet's — MLP 784-128-10, Adam, batch 64, checkpoints every k steps (k = ${recommendedCheckpointEvery(1000)} is \`task new\`'s default at 1000 steps, from the cost model in docs/protocol.md §5; k = 10 was the previous default). Plain = \`proofswarm train --plain\` as a process (start to exit, dataset load included). A verifier = the replay of its sample in the verifier peer's warm engine, checkpoints laid out by the program as a verifier peer loads them (node/engine/engine-server.ts: a peer keeps it between tasks and warms it, backend and dataset, while checkpoints download — its start-up is not counted); "cold" = a \`proofswarm replay --steps …\` process per task, as before. Both include loading and checking the checkpoints; fetching them from the solver is measured separately below. Mean of ${TRIALS} samples × ${VERIFIERS} verifiers (cold: 1 × ${VERIFIERS}). Overhead = ${VERIFIERS} verifiers / plain training, in CPU time (all threads) and wall time. Solver = CPU of verifiable training (state root every step + checkpoints) over plain. Detection = exact probability that at least one verifier samples a step of a faked 10% (hypergeometric, worst placement).

| task steps | k | checkpoints (MiB) | samples per verifier: steps replayed, checkpoints loaded | plain training CPU (wall) | one verifier, warm: CPU (wall) | **verification overhead, warm: CPU** (wall) | cold: CPU (wall) | solver's own extra CPU | detection of 10% faked |
|---|---|---|---|---|---|---|---|---|---|
${rows.map(r => `| ${r.steps} | ${r.k} | ${r.checkpoints} (${r.ckMiB.toFixed(0)}) | ${r.n}: ${r.replayed.toFixed(0)}, ${r.loads.toFixed(1)} | ${r.plainCpu.toFixed(1)} s (${r.plainWall.toFixed(1)} s) | ${r.warmCpu.toFixed(2)} s (${r.warmWall.toFixed(2)} s) | **${pct(r.overWarmCpu)}** (${pct(r.overWarmWall)}) | ${pct(r.overColdCpu)} (${pct(r.overColdWall)}) | +${pct(r.solverCpu)} | ${pct(r.detection)} |`).join('\n')}

**Fetching the checkpoints** (the devnet's task, k = ${devK}): a verifier node fetches the data of the checkpoints its replay loads (state.bin; the engine lays it out by the program and checks it by the replayed state roots, so neither the manifest nor a content sha256 is needed) from the solver's peer (\`fetchToFile\` over libp2p — noise, yamux — on 127.0.0.1; the solver serves them by reference from its run directory; both processes with the V8 heap settings of \`proofswarm join\`, node/cli/peer-heap.ts). Measured here with a solver shard service in its own process: ${devnetRow.transfer.checkpoints.toFixed(1)} checkpoints per verifier, **${devnetRow.transfer.fetchCpu.toFixed(2)} s CPU to fetch + ${devnetRow.transfer.serveCpu.toFixed(2)} s CPU to serve** (${devnetRow.transfer.wall.toFixed(2)} s wall). **Verification overhead including the transfer: ${pct(devnetRow.overAll)}** of plain training (CPU, ${VERIFIERS} verifiers: replay ${pct(devnetRow.overWarmCpu)} + transfer ${pct(devnetRow.overAll - devnetRow.overWarmCpu)}).

**Overhead vs detection** on the devnet's task (1000 steps, k = ${recommendedCheckpointEvery(1000)}, warm engine, CPU), for other sample sizes: detection is the exact probability that ${VERIFIERS} verifiers with n samples each catch a solver faking a share f of its steps (any placement).

| samples per verifier | verification overhead (CPU, ${VERIFIERS} verifiers) | detection, f = 5% | f = 10% | f = 20% |
|---|---|---|---|---|
${curve.map(c => `| ${c.n}${c.n === requiredSampleCount(VERIFIERS) ? ' (default)' : ''} | ${pct(c.overhead)} | ${pct(c.d5)} | ${pct(c.d10)} | ${pct(c.d20)} |`).join('\n')}

Measured detection: a solver that faked steps ${start}–${start + block - 1} (one contiguous 10% block of the 1000-step task, k = ${k}, via the hidden \`train --fault-op\`) was caught in **${caught} of ${DETECT_TRIALS}** independent draws of the ${VERIFIERS} verifiers' samples (expected ≥ 99%).

Goal ≤ 25% overhead at ≥ 99% detection: the replay ${met.length > 0 ? `meets it (warm engine, CPU) for ${met.map(r => `${r.steps} steps / k = ${r.k}`).join(', ')}` : 'does not meet it in this table'}; with the transfer of the checkpoints (js-libp2p: noise and yamux in JavaScript, ${(1000 * devnetRow.transfer.fetchCpu / devnetRow.transfer.checkpoints).toFixed(0)} ms of CPU to fetch and ${(1000 * devnetRow.transfer.serveCpu / devnetRow.transfer.checkpoints).toFixed(0)} ms to serve a 1.2 MB checkpoint here) it ${devnetRow.overAll <= 0.25 ? 'is met' : 'is NOT met'} on the devnet's task (1000 steps, k = ${recommendedCheckpointEvery(1000)}): ${devnetRow != null ? `replay ${pct(devnetRow.overWarmCpu)} CPU (${pct(devnetRow.overWarmWall)} wall), with fetching and serving the checkpoints ${pct(devnetRow.overAll)}` : '?'}. The replayed share is ≈ 44 × (k + 1) / 2 steps whatever the task's length, plus two state roots per sample, so short tasks pay relatively more (400 steps: 44 samples are 11% of the run before any replay) and long ones less. The solver's column is what the checkpoints and state roots cost the solver (the Training section has that cost at batch 64 and 128 with pairs); a whistleblower replays every step (100% by design, paid from the jackpot to catch forced errors) from one checkpoint.
`)
  console.log('docs/benchmarks.md: Verification overhead vs detection section written')
} finally {
  engine.stop()
  rmSync(dir, { recursive: true, force: true })
}
