// Part of `npm run bench -- availability` (imported by availability.bench.ts):
// the honest verifier's cost with erasure-coded checkpoints, side by side
// with the same verification without them, in one run, on the devnet's task
// (MLP 784-128-10, Adam, batch 64, 1000 steps, k = 5, Fashion-MNIST):
//   plain training   = `proofswarm train --plain` (a process)
//   before           = replay of each verifier's sample in the warm engine +
//                      fetching the checkpoints it loads (state.bin) from the
//                      solver's shard service (both in this process: fetch + serve CPU)
//   after            = before + checking the run index's codings against the
//                      coded root + sampling 48 chunks of one loaded checkpoint
//                      (chunk list + chunks, each checked against its leaf hash)
// and the solver's one-off coding of the run.
import '../../node/polyfill.js'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import pino from 'pino'
import type { RunIndex } from '../../protocols/verification/run-index.js'
import { fromDist } from './ts-script.js'
const { createHost } = await fromDist<typeof import('../../node/p2p/host.js')>('node/p2p/host.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')
const { ShardService } = await fromDist<typeof import('../../node/shards/service.js')>('node/shards/service.js')
const { WarmEngine } = await fromDist<typeof import('../../node/engine/warm-engine.js')>('node/engine/warm-engine.js')
const { codeRun } = await fromDist<typeof import('../../node/erasure/coded-run.js')>('node/erasure/coded-run.js')
const { checkCodedIndex, sampleFromProviders } = await fromDist<typeof import('../../node/erasure/verifier-chunks.js')>('node/erasure/verifier-chunks.js')
const { chunkRootEntry, codingParams } = await fromDist<typeof import('../../protocols/erasure/index.js')>('protocols/erasure/index.js')
const { toHex } = await fromDist<typeof import('../../protocols/commit/merkle.js')>('protocols/commit/merkle.js')
const { checkpointLoads, recommendedCheckpointEvery, sampleSteps } = await fromDist<typeof import('../../protocols/verification/sample.js')>('protocols/verification/sample.js')
const { requiredSampleCount } = await fromDist<typeof import('../../protocols/verification/verdict.js')>('protocols/verification/verdict.js')

const CLI = join('dist', 'node', 'cli', 'main.js')
const FASHION = '/usr/share/datasets/fashion-mnist'
const VERIFIERS = 2
const TICK = 100
const quiet = createLogger('bench', { level: 'silent', pretty: false })
const cpuSec = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1e6

function cpuOfPid (pid?: number): number {
  const s = readFileSync(`/proc/${pid ?? 'self'}/stat`, 'utf8')
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
  return pid == null ? (Number(f[13]) + Number(f[14])) / TICK : (Number(f[11]) + Number(f[12])) / TICK
}
function cli (args: string[]): { wall: number, cpu: number, json: any } {
  const c0 = cpuOfPid()
  const t = performance.now()
  const r = spawnSync(process.execPath, [CLI, ...args, ...(args[0] === 'task' ? [] : ['--log-level', 'warn'])], { encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.status !== 0) throw new Error(`proofswarm ${args.join(' ')} failed (${r.status}):\n${r.stderr.slice(-3000)}`)
  const line = r.stdout.trim().split('\n').filter(l => l.startsWith('{')).pop()
  return { wall: (performance.now() - t) / 1000, cpu: cpuOfPid() - c0, json: line != null ? JSON.parse(line) : undefined }
}
async function shardPeer (dataDir: string) {
  const host = await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })
  return { host, svc: await ShardService.start({ host, dataDir, log: quiet, gcIntervalMs: 0 }) }
}
const seedOf = (i: number): string => '0x' + (0x5eed0000 + i).toString(16).padStart(64, '0')
const acctOf = (v: number): string => '0x' + (0xacc00000 + v).toString(16).padStart(64, '0')
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length

export async function overheadBench (dir: string, trials = 3) {
  const steps = 1000
  const k = recommendedCheckpointEvery(steps)
  const dataset = existsSync(FASHION) ? FASHION : 'synthetic'
  const data = dataset === FASHION ? ['--dataset-dir', FASHION] : []
  mkdirSync(dir, { recursive: true })
  const task = join(dir, 'task.json')
  cli(['task', 'new', '--model', 'mlp', '--dataset', dataset, '--steps', String(steps), '--batch', '64', '--checkpoint-every', String(k), '--root-every', '1', '--optimizer', 'adam', '--out', task])
  const plain = cli(['train', '--task', task, '--out', join(dir, 'plain'), '--plain', '--no-evaluate', '--json', ...data])
  const run = join(dir, 'run')
  const verif = cli(['train', '--task', task, '--out', run, '--no-evaluate', '--json', ...data])
  if (verif.json?.proofWritten !== true) throw new Error('no proof written')
  // the solver codes its run once, before commit_proof
  let c0 = process.cpuUsage()
  const coded = codeRun(run)
  const codingCpu = cpuSec(process.cpuUsage(c0))
  const proof = JSON.parse(readFileSync(join(run, 'proof.json'), 'utf8'))
  const ckSteps = proof.checkpoints.map((c: { step: number }) => c.step)
  // the solver's shard service serves state.bin and chunks.bin by reference, as publishRun does
  const solver = await shardPeer(join(dir, 'solver-shards'))
  const me = await shardPeer(join(dir, 'verifier-shards'))
  const engine = new WarmEngine(pino({ level: 'warn' }))
  try {
    const index: RunIndex = { version: 1, taskId: 0, programHash: proof.programHash, proofRoot: proof.proofRoot, program: 'b' + 'a'.repeat(58), proof: 'b' + 'a'.repeat(58), checkpoints: [] }
    for (const [i, step] of ckSteps.entries()) {
      const d = join(run, 'checkpoints', `step-${String(step).padStart(8, '0')}`)
      const add = async (f: string, o = {}): Promise<string> => (await solver.svc.addFile(join(d, f), { name: `${step}-${f}`, kind: 'checkpoint' }, { byReference: true, provide: false, ...o })).cid
      const c = coded.checkpoints[i]
      index.checkpoints.push({ step, manifest: await add('manifest.json'), data: await add('state.bin'), coded: { dataBytes: c.dataBytes, chunkRoot: toHex(c.chunkRoot), list: await add('chunks.json'), chunks: await add('chunks.bin', { blockSize: codingParams(c.dataBytes).chunkBytes }) } })
    }
    const chainEntries = ['run-index:x', chunkRootEntry(coded.codedRoot)]
    await me.host.dial(multiaddr(solver.host.getMultiaddrs()[0].toString()))
    const providers = [solver.host.peerId.toString()]
    await engine.warm(join(run, 'task.json'), dataset === FASHION ? FASHION : undefined)
    const rows: Array<{ replayCpu: number, transferCpu: number, chunkCpu: number, loads: number }> = []
    for (let t = -1; t < trials; t++) {
      for (let v = 0; v < VERIFIERS; v++) {
        const sampled = sampleSteps(seedOf(t + 10), acctOf(v), steps, requiredSampleCount(VERIFIERS))
        const loads = checkpointLoads(sampled, ckSteps)
        // replay (unchanged by erasure coding)
        const e0 = cpuOfPid(engine.pid)
        const out = await engine.replay(run, sampled, dataset === FASHION ? FASHION : undefined, undefined, 'program')
        if (out.unavailable != null || out.results.some(x => !x.match)) throw new Error('an honest replay failed')
        const replayCpu = cpuOfPid(engine.pid) - e0
        // fetching the loaded checkpoints' data from the solver (before and after)
        const dest = join(dir, `fetched-${t}-${v}`)
        c0 = process.cpuUsage()
        for (const step of loads) {
          const e = index.checkpoints.find(c => c.step === step)
          if (e === undefined) throw new Error(`no checkpoint at step ${step}`)
          mkdirSync(join(dest, String(step)), { recursive: true })
          await me.svc.fetchToFile(e.data, join(dest, String(step), 'state.bin'), { providers, provide: false, contentHash: false })
        }
        const transferCpu = cpuSec(process.cpuUsage(c0))
        // what erasure coding adds: the codings checked against the coded root, 48 chunks of one loaded checkpoint sampled
        c0 = process.cpuUsage()
        checkCodedIndex(index, chainEntries)
        const pick = index.checkpoints.find(c => c.step === loads[(t + 1 + v) % loads.length])
        if (pick === undefined) throw new Error('no checkpoint to sample')
        const missing = await sampleFromProviders(me.svc, pick, { providers })
        if (missing.length > 0) throw new Error(`an honest solver did not serve ${missing.length} sampled chunks`)
        const chunkCpu = cpuSec(process.cpuUsage(c0))
        // the first round warms the connection and the JIT: not counted
        if (t >= 0) rows.push({ replayCpu, transferCpu, chunkCpu, loads: loads.length })
      }
    }
    const r = {
      replayCpu: mean(rows.map(x => x.replayCpu)), transferCpu: mean(rows.map(x => x.transferCpu)),
      chunkCpu: mean(rows.map(x => x.chunkCpu)), loads: mean(rows.map(x => x.loads))
    }
    const before = VERIFIERS * (r.replayCpu + r.transferCpu) / plain.cpu
    const after = VERIFIERS * (r.replayCpu + r.transferCpu + r.chunkCpu) / plain.cpu
    return { steps, k, checkpoints: ckSteps.length, plainCpu: plain.cpu, verifCpu: verif.cpu, codingCpu, codingMs: coded.ms, ...r, before, after, trials, dataset: dataset === FASHION ? 'Fashion-MNIST' : 'synthetic' }
  } finally {
    engine.stop()
    await me.svc.stop(); await me.host.stop()
    await solver.svc.stop(); await solver.host.stop()
  }
}
