import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pino from 'pino'
import { ROLE_SOLVER, ROLE_VERIFIER } from '../../node/chain/client.js'
import type { PortsShared } from '../../node/roles/ports-part.js'
import { sha256, toHex } from '../../protocols/commit/merkle.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { validateProgram } from '../../protocols/program/program.js'
import { DECLARED_RUNTIMES } from '../../protocols/program/runtime.js'
import { validateProof } from '../../protocols/pol/proof.js'
import { withheldRunCheckpoints } from '../../protocols/verification/chain-run.js'
import { sampleSegments } from '../../protocols/verification/sample.js'
import { verifierSampleCount } from '../../protocols/verification/verdict.js'
import { testPeer } from '../helpers/peer-key.js'
import { chainClients } from './chain-clients.js'

// A solver (with its submitter) that withholds its run index and proof.json
// from an honest drawn verifier, over the dev chain process (docs/disputes.md
// "Withheld checkpoints"). The verifier's node (VerifierPorts from dist/, its
// real warm engine) cannot fetch anything the solver published: it rejects and
// challenges at once every checkpoint its sample's replay loads, and 0; the
// solver serves them on chain; the verifier's reject is withdrawn and its node
// replays from the chain alone (the program from the task's submit_task
// extrinsic, the committed roots and the checkpoints from the serves), accepts,
// and is paid. Before, it challenged the first checkpoint its sample needed
// only, and after the serve still could not replay without the run index: it
// could only stay silent and lapse, −(B + R).

const run = promisify(execFile)
const DIST = join(process.cwd(), 'dist')
const MAIN = join(DIST, 'node/cli/main.js')
const UNIT = 10n ** 12n
const V = 100n * UNIT
const log = pino({ level: process.env.LOG_LEVEL ?? 'silent' })

const c = chainClients('ps-withheld-run-', ['Alice', 'Bob', 'Dave'])
let dir: string
let programBytes: Uint8Array
let runDir: string
let engine: { stop: () => void }
let fakedDir: string
let fakedBytes: Uint8Array
let VerifierPorts: typeof import('../../node/roles/verifier-ports.js').VerifierPorts
let serveFromRun: typeof import('../../node/availability/responder.js').serveFromRun
let ensureReplayDir: typeof import('../../node/dispute/replay-dir.js').ensureReplayDir
let runEngineJob: typeof import('../../node/engine/engine.js').runEngineJob

async function cli (...args: string[]): Promise<string> {
  return (await run(process.execPath, [MAIN, ...args, ...(args[0] === 'task' ? [] : ['--log-level', 'warn'])], { timeout: 180_000, maxBuffer: 16 << 20 })).stdout
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-withheld-run-'))
  // 80 segments of 2 steps, checkpoints every 16: the verifier's 44 sampled segments load several checkpoints
  const { info: _i, ...program } = validateProgram(JSON.parse(await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '160', '--checkpoint-every', '16', '--root-every', '2', '--batch', '8', '--seed', '5', '--synthetic-size', '256', '--optimizer', 'sgd')))
  programBytes = new TextEncoder().encode(canonicalJson(program))
  writeFileSync(join(dir, 'task.json'), programBytes)
  runDir = join(dir, 'run')
  await cli('train', '--task', join(dir, 'task.json'), '--out', runDir, '--no-evaluate', '--json')
  // 20 segments of 2 steps: the verifier samples them all; the solver fakes an op of step 12
  const { info: _j, ...small } = validateProgram(JSON.parse(await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '40', '--checkpoint-every', '8', '--root-every', '2', '--batch', '8', '--seed', '6', '--synthetic-size', '256', '--optimizer', 'sgd')))
  fakedBytes = new TextEncoder().encode(canonicalJson(small))
  writeFileSync(join(dir, 'small.json'), fakedBytes)
  fakedDir = join(dir, 'faked')
  await cli('train', '--task', join(dir, 'small.json'), '--out', fakedDir, '--no-evaluate', '--json', '--fault-op', 'BatchMatMul@12')
  ;({ ensureReplayDir } = await import(join(DIST, 'node/dispute/replay-dir.js')) as typeof import('../../node/dispute/replay-dir.js'))
  ;({ runEngineJob } = await import(join(DIST, 'node/engine/engine.js')) as typeof import('../../node/engine/engine.js'))
  ;({ VerifierPorts } = await import(join(DIST, 'node/roles/verifier-ports.js')) as typeof import('../../node/roles/verifier-ports.js'))
  ;({ serveFromRun } = await import(join(DIST, 'node/availability/responder.js')) as typeof import('../../node/availability/responder.js'))
  const { WarmEngine } = await import(join(DIST, 'node/engine/warm-engine.js')) as typeof import('../../node/engine/warm-engine.js')
  engine = new WarmEngine(log)
}, 300_000)
afterAll(() => {
  engine?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const withheld = async (): Promise<never> => { throw new Error('no provider answered (withheld)') }

/** The verifier's node: nothing the solver published can be fetched. */
function verifier (dataDir = mkdtempSync(join(dir, 'dave-'))): InstanceType<typeof VerifierPorts> {
  const shared = {
    init: { chain: async () => c.Dave, shards: { fetchBytes: withheld, fetchToFile: withheld }, book: { get: async () => undefined, publish: async () => {} } },
    peerId: 'dave-peer',
    progress: new Map(),
    econ: {},
    log,
    dataDir,
    engine
  } as unknown as PortsShared
  return new VerifierPorts(shared)
}

describe('a withheld run index and proof.json, over the dev chain', () => {
  it('the verifier challenges every checkpoint its replay needs at once, is served, replays from the chain alone and is paid', async () => {
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const proof = validateProof(JSON.parse(readFileSync(join(runDir, 'proof.json'), 'utf8')))
    const keys = { Bob: testPeer('BobWithheld'), Dave: testPeer('DaveWithheld') }
    await c.Bob.registerNode(keys.Bob.peerId, ROLE_SOLVER, 2000n * UNIT, keys.Bob.sign)
    await c.Dave.registerNode(keys.Dave.peerId, ROLE_VERIFIER, 2000n * UNIT, keys.Dave.sign)
    // task new's runtime (psk1 where its addon is built) is drawn only among peers that declared it
    const runtime = validateProgram(JSON.parse(new TextDecoder().decode(programBytes))).runtime
    if (DECLARED_RUNTIMES.includes(runtime)) for (const who of [c.Bob, c.Dave]) await who.setRuntimes([runtime])
    const id = Number(await c.Alice.submitTask({
      programHash: '0x' + toHex(sha256(programBytes)), program: programBytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32),
      steps: 160, checkpointEvery: 16, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: V,
      verifierCount: 1, challengeWindow: 60, solveTimeout: 100
    }))
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    // Bob commits its honest proof and names a run index nobody can fetch
    await c.Bob.commitProof(id, { proofRoot: '0x' + proof.proofRoot, finalStateRoot: '0x' + proof.finalStateRoot, stepCount: 160, checkpoints: ['run-index:bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    const mine = await c.Dave.myAssignment(id)
    expect(mine).not.toBeNull()
    const dave = await c.Dave.balance()
    const ports = verifier()

    // 1. nothing published can be obtained: every checkpoint a replay from the chain needs, at once
    const first = await ports.verify(id)
    expect(first.accept).toBe(false)
    const u = first.unavailable!
    const challenged = [u.step, ...(u.more ?? [])]
    const sampled = sampleSegments((await c.Dave.randomness(mine!.seedBlock))!, c.Dave.accountId, 160, 2, verifierSampleCount(1))
    const expected = withheldRunCheckpoints(sampled, { stepCount: 160, checkpointEvery: 16, diverged: false }, 2)
    expect(challenged).toEqual(expected)
    // the premise: the replay needs several checkpoints (before, only the first was challenged); how many
    // depends on the drawn sample (2 or more with 0 always among them)
    expect(challenged.length).toBeGreaterThan(1)
    await ports.submitVerdict(id, first)
    const challenging = ports.challengeAvailability(id, u.step, u.more)
    // 2. Bob serves each challenged checkpoint from its run, part by part
    for (let i = 0; i < 60; i++) {
      const open = await c.Bob.openAvailability(id)
      if (open.length === challenged.length) break
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    const open = await c.Bob.openAvailability(id)
    expect(open.map(([s]) => s).sort((a, b) => a - b)).toEqual(challenged)
    for (const [step, cid] of open) for (const part of serveFromRun(runDir, step, '0x' + proof.proofRoot)) await c.Bob.respondAvailability(cid, part)
    const r = await challenging
    expect(r.served).toBe(true)
    // 3. its reject withdrawn, the node replays from the chain alone and accepts
    expect((await c.Dave.myAssignment(id))?.backed).toBe(false)
    const second = await ports.verify(id)
    expect(second.unavailable).toBeUndefined()
    expect(second.accept).toBe(true)
    expect(second.checkedSteps.length).toBeGreaterThan(0)
    await ports.submitVerdict(id, second)
    for (let i = 0; i < 80 && (await c.Alice.task(id))?.phase === 'Verifying'; i++) await block()
    expect((await c.Alice.task(id))?.phase).toBe('Settled')
    const after = await c.Dave.balance()
    expect(after.free + after.reserved - dave.free - dave.reserved).toBe(V)
  }, 300_000)

  it('a solver that faked a step and withholds its run is caught from the chain data, and the dispute re-executes from it', async () => {
    const block = async (): Promise<void> => { await c.Alice.api.rpc.engine.createBlock(true, true) }
    const proof = validateProof(JSON.parse(readFileSync(join(fakedDir, 'proof.json'), 'utf8')))
    const id = Number(await c.Alice.submitTask({
      programHash: '0x' + toHex(sha256(fakedBytes)), program: fakedBytes, datasetRoot: '0x' + '02'.repeat(32), skeletonRoot: '0x' + '03'.repeat(32),
      steps: 40, checkpointEvery: 8, escrow: 1000n * UNIT, solverReward: 500n * UNIT, verifierReward: V,
      verifierCount: 1, challengeWindow: 60, solveTimeout: 100
    }))
    await block()
    expect((await c.Alice.task(id))?.solver).toBe(c.Bob.accountId)
    // no run index at all
    await c.Bob.commitProof(id, { proofRoot: '0x' + proof.proofRoot, finalStateRoot: '0x' + proof.finalStateRoot, stepCount: 40, checkpoints: [] })
    for (let i = 0; i < 10 && await c.Dave.myAssignment(id) == null; i++) await block()
    expect(await c.Dave.myAssignment(id)).not.toBeNull()
    const dataDir = mkdtempSync(join(dir, 'dave-'))
    const ports = verifier(dataDir)
    const first = await ports.verify(id)
    // every segment is sampled: the replay runs on from checkpoint 0 alone
    expect(first.unavailable).toEqual(expect.objectContaining({ step: 0 }))
    expect(first.unavailable?.more).toBeUndefined()
    await ports.submitVerdict(id, first)
    const challenging = ports.challengeAvailability(id, 0)
    let open: Array<[number, number]> = []
    for (let i = 0; i < 60 && open.length === 0; i++) {
      open = await c.Bob.openAvailability(id)
      if (open.length === 0) await new Promise(resolve => setTimeout(resolve, 250))
    }
    for (const [step, cid] of open) for (const part of serveFromRun(fakedDir, step, '0x' + proof.proofRoot)) await c.Bob.respondAvailability(cid, part)
    expect((await challenging).served).toBe(true)
    // from the chain alone, the replay compares the committed roots: segment 11…12 is wrong
    const second = await ports.verify(id)
    expect(second.accept).toBe(false)
    expect(second.unavailable).toBeUndefined()
    expect(second.firstBadStep).toBe(12)
    // the dispute's re-execution starts from the directory rebuilt from the chain (no run index to fetch)
    const task = (await c.Dave.task(id))!
    const runDirOf = join(dataDir, 'verify', String(id))
    const replay = await ensureReplayDir({ fetchBytes: withheld, fetchToFile: withheld } as never, id, task, runDirOf, 12, 'bob-peer')
    expect(replay.proof.proofRoot).toBe(proof.proofRoot)
    const seg = await runEngineJob({ kind: 'segment-roots', runDir: runDirOf, first: 10, length: 2 }, log, 'segment roots').result
    expect(seg.roots[0]).toBe(proof.stateRoots[5])
    expect(seg.roots[2]).not.toBe(proof.stateRoots[6])
  }, 300_000)
})
