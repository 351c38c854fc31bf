// Dev chain benchmarks (plain script over dist/: npm run bench -- chain, or
// `npm run bench -- chain [--txs 10000] [--rounds 1] [--profile dir]
//  [--workers default,0,1,2] [--baseline <checkout with dist/>@<label>] [--only transfers|adjudication] [--no-write]`)
// 1. sustained balance transfers per second with 1 s blocks: the chain runs in
//    its own process; the bench pre-signs every transfer before the timed
//    window and pushes them pipelined over raw WebSockets, so the figure
//    measures the chain. Measured with the signature-verification worker pool
//    and without it (PROOFSWARM_CHAIN_VERIFY_WORKERS=0), interleaved in one run.
// 2. adjudication of one MatMul element with K = 784 and of a whole op of the
//    mlp's first layer, through the real path (protocols/dispute judgeClaim and
//    the runtime's Arbitration.adjudicate), see adjudication part below.
import '../../node/polyfill.js'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, readFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import WebSocket from 'ws'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { blake2AsU8a, ed25519PairFromSeed, ed25519Sign } from '@polkadot/util-crypto'
import { sr25519Verify } from '@polkadot/util-crypto'
import { machine, writeSection } from './report.js'
import { fromDist } from './ts-script.js'
import type { TensorData } from '../../protocols/commit/index.js'
import type { OpShape } from '../../protocols/reference/index.js'
import type { Claim, JudgeEnv } from '../../protocols/dispute/index.js'
import type { TapeEntry } from '../../protocols/tape/index.js'
const { peerBindingPayload, peerIdOfEd25519 } = await fromDist<typeof import('../../protocols/identity/peer-binding.js')>('protocols/identity/peer-binding.js')
const { commitTensor, proveSlice, sha256, toHex, merkleRoot, fromHex } = await fromDist<typeof import('../../protocols/commit/index.js')>('protocols/commit/index.js')
const { DefenderGame, encodeClaim, decodeClaim, judgeClaim, encodeEntryBytes, treeLevels, pathWith } = await fromDist<typeof import('../../protocols/dispute/index.js')>('protocols/dispute/index.js')
const reference = await fromDist<typeof import('../../protocols/reference/index.js')>('protocols/reference/index.js')
const { WASM_RUNTIME } = await fromDist<typeof import('../../protocols/program/runtime.js')>('protocols/program/runtime.js')
const { newProgram, programBytes } = await fromDist<typeof import('../../protocols/program/index.js')>('protocols/program/index.js')
const { Runtime } = await fromDist<typeof import('../../devnet/chain/runtime/executive.js')>('devnet/chain/runtime/executive.js')
const { RandomnessAuthor } = await fromDist<typeof import('../../devnet/chain/randomness-author.js')>('devnet/chain/randomness-author.js')
const { devGenesis, UNIT } = await fromDist<typeof import('../../devnet/chain/dev-spec.js')>('devnet/chain/dev-spec.js')
const { verifySignature } = await fromDist<typeof import('../../devnet/chain/runtime/signature.js')>('devnet/chain/runtime/signature.js')

const argv = process.argv
function arg (n: string): string | undefined
function arg (n: string, d: string | number): string
function arg (n: string, d?: string | number): string | undefined {
  const i = argv.indexOf(n); return i > 0 ? argv[i + 1] : d === undefined ? undefined : String(d)
}
const TXS = Number(arg('--txs', 10000))
const LIMIT_S = Number(arg('--limit-s', 90))
const ROUNDS = Number(arg('--rounds', 1))
const PROFILE = arg('--profile')
const WRITE = !argv.includes('--no-write')
const ONLY = arg('--only') // 'transfers' | 'adjudication'

const SENDERS = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', 'Peer1', 'Peer2', 'Peer3', 'Peer4', 'Peer5', 'Peer6', 'Peer7', 'Peer8']

/** Starts `proofswarm chain` from a build (root: a checkout with dist/, default this one). */
async function startChainProcess ({ workers, profile, root = '.' }: { workers?: number, profile?: string, root?: string }) {
  const dir = await mkdtemp(join(tmpdir(), 'ps-chain-bench-'))
  const nodeArgs = profile ? ['--cpu-prof', '--cpu-prof-dir', resolve(profile), '--cpu-prof-name', `chain-${root === '.' ? 'new' : 'old'}-workers${workers}-${Date.now()}.cpuprofile`] : []
  const env = { ...process.env }
  if (workers !== undefined) env.PROOFSWARM_CHAIN_VERIFY_WORKERS = String(workers)
  const proc = spawn(process.execPath, [...nodeArgs, 'dist/node/cli/main.js', 'chain', '--port', '0', '--data-dir', dir, '--block-time', '1000', '--json', '--log-level', 'warn'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env })
  const info = await new Promise<{ url: string, genesis: string }>((resolve, reject) => {
    let buf = ''
    proc.stdout.on('data', (d: Buffer) => { buf += d.toString(); const l = buf.split('\n').find(x => x.startsWith('{')); if (l) resolve(JSON.parse(l)) })
    proc.once('exit', c => reject(new Error(`chain exited ${c}`)))
  })
  return {
    ...info,
    pid: proc.pid,
    stop: async () => {
      proc.kill('SIGINT')
      await new Promise(r => proc.once('exit', r))
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/** utime + stime of a process, all its threads, in seconds (Linux /proc). */
async function cpuSeconds (pid: number | undefined): Promise<number> {
  try {
    const s = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
    return (Number(s[11]) + Number(s[12])) / 100
  } catch { return NaN }
}

/** Signs TXS transfers from 14 dev accounts (nonces 0.., immortal) for the chain at `url`; outside any timed window. */
async function signTransfers (url: string): Promise<{ signed: string[], signMs: number }> {
  const api = await ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true })
  try {
    const kr = new Keyring({ type: 'sr25519' })
    const senders = SENDERS.map(n => kr.addFromUri(`//${n}`))
    const dest = kr.addFromUri('//BenchSink').address
    const per = Math.ceil(TXS / senders.length)
    const t = performance.now()
    const signed: string[] = []
    for (let i = 0; i < per; i++) {
      for (const s of senders) {
        if (signed.length >= TXS) break
        signed.push(
          api.tx.balances.transferKeepAlive(dest, 1_000_000_000n + BigInt(i)).sign(s, {
            nonce: i, era: 0 as any, blockHash: api.genesisHash, genesisHash: api.genesisHash, runtimeVersion: api.runtimeVersion
          }).toHex()
        )
      }
    }
    return { signed, signMs: performance.now() - t }
  } finally { await api.disconnect() }
}

interface RpcSocket { ws: WebSocket, call: (method: string, params: unknown[]) => Promise<any>, onOther: (h: (m: any) => void) => void }
function rpcSocket (url: string): Promise<RpcSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const pending = new Map<number, (m: any) => void>()
    let next = 1e9
    const handlers: Array<(m: any) => void> = []
    ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString())
      if (m.id !== undefined && pending.has(m.id)) { const p = pending.get(m.id); pending.delete(m.id); p?.(m) } else for (const h of handlers) h(m)
    })
    ws.once('open', () => resolve({
      ws,
      call: (method, params) => new Promise(res => { const id = next++; pending.set(id, res); ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params })) }),
      onOther: h => handlers.push(h)
    }))
    ws.once('error', reject)
  })
}

const signedByGenesis = new Map<string, string[]>()

/** One measured run: a fresh chain, every pre-signed transfer pushed at once, inclusion followed by new heads. */
interface Variant { name: string, workers?: number, root?: string, txs?: number }
async function transferRun (variant: Variant) {
  const chain = await startChainProcess({ workers: variant.workers, profile: PROFILE, root: variant.root })
  try {
    if (!signedByGenesis.has(chain.genesis)) {
      const s = await signTransfers(chain.url)
      console.log(`signed ${s.signed.length} transfers for genesis ${chain.genesis.slice(0, 10)}… in ${(s.signMs / 1000).toFixed(1)} s (before the timed window)`)
      signedByGenesis.set(chain.genesis, s.signed)
    }
    const signed = (signedByGenesis.get(chain.genesis) ?? []).slice(0, variant.txs ?? TXS)
    await new Promise(r => setTimeout(r, 1500)) // let the chain settle after the signing connection
    const watch = await rpcSocket(chain.url)
    const sockets = await Promise.all(Array.from({ length: 4 }, () => rpcSocket(chain.url)))
    const blocks: Array<{ n: number, count: number, at: number }> = []
    let included = 0
    let lastIncludedAt = 0
    let resolveAll = (): void => {}
    const all = new Promise<void>(resolve => { resolveAll = resolve })
    let expected = signed.length
    watch.onOther(m => {
      if (m.method !== 'chain_newHead') return
      const at = performance.now()
      const n = parseInt(m.params.result.number, 16)
      void (async () => {
        const hash = (await watch.call('chain_getBlockHash', [n])).result
        const b = (await watch.call('chain_getBlock', [hash])).result
        const count = b.block.extrinsics.length
        blocks.push({ n, count, at })
        if (count > 0) { included += count; lastIncludedAt = Math.max(lastIncludedAt, at) }
        if (included >= expected) resolveAll()
      })()
    })
    await watch.call('chain_subscribeNewHeads', [])
    const cpu0 = await cpuSeconds(chain.pid)
    const client0 = process.cpuUsage()
    let acked = 0; let errors = 0; let firstError: unknown
    const t0 = performance.now()
    let ackedAt = 0
    const acks = signed.map((hex, i) => sockets[i % sockets.length].call('author_submitExtrinsic', [hex]).then(m => {
      acked++
      if (m.error) { errors++; firstError ??= m.error; expected-- }
      if (acked === signed.length) ackedAt = performance.now()
    }))
    await Promise.all(acks)
    if (included >= expected) resolveAll()
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>(resolve => {
      timer = setTimeout(() => { timedOut = true; lastIncludedAt = performance.now(); resolve() }, LIMIT_S * 1000)
    })
    await Promise.race([all, timeout])
    clearTimeout(timer)
    const clientCpu = process.cpuUsage(client0)
    const cpu1 = await cpuSeconds(chain.pid)
    const wallS = (lastIncludedAt - t0) / 1000
    const busy = blocks.filter(b => b.count > 0).sort((a, b) => a.n - b.n)
    for (const s of [watch, ...sockets]) s.ws.close()
    return {
      variant: variant.name,
      timedOut,
      txs: signed.length,
      rejected: errors,
      firstError,
      included,
      admitPerSec: signed.length / ((ackedAt - t0) / 1000),
      sustainedPerSec: included / wallS,
      wallS,
      perBlock: busy.map(b => b.count),
      chainCpuS: cpu1 - cpu0,
      clientCpuS: (clientCpu.user + clientCpu.system) / 1e6
    }
  } finally { await chain.stop() }
}

const BASELINE = arg('--baseline')
const BASELINE_TXS = Number(arg('--baseline-txs', 4000))
/** verify-worker counts to compare ('default' = the chain's own choice, 0 = inline) */
const WORKERS = String(arg('--workers', 'default,0')).split(',')

async function transferBench () {
  const variants: Variant[] = WORKERS.map(w => w === 'default'
    ? { name: 'verify workers (default count)', workers: undefined }
    : { name: w === '0' ? 'verify inline (PROOFSWARM_CHAIN_VERIFY_WORKERS=0)' : `${w} verify worker${w === '1' ? '' : 's'}`, workers: Number(w) })
  // the old block builder is quadratic in out-of-order nonces: it gets the transfer count of its last measurement
  if (BASELINE !== undefined) variants.push({ name: `old path (${BASELINE.split('@')[1] ?? 'baseline build'})`, root: BASELINE.split('@')[0], txs: Math.min(TXS, BASELINE_TXS) })
  const load0 = loadavg()
  const runs: Array<Awaited<ReturnType<typeof transferRun>>> = []
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of variants) {
      const x = await transferRun(v)
      console.log(JSON.stringify(x))
      runs.push(x)
    }
  }
  return { runs, variants, load0, load1: loadavg() }
}

// ---------------------------------------------------------------- adjudication

function rand (seed: number): () => number { let s = seed >>> 0; return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return (s / 2 ** 32) * 2 - 1 } }
const timeIt = (runs: number, f: () => unknown): number => {
  for (let i = 0; i < Math.min(20, runs); i++) f(); const t = performance.now(); for (let i = 0; i < runs; i++) f(); return (performance.now() - t) / runs
}

/**
 * A real element claim (protocols/dispute) against the mlp's first layer:
 * BatchMatMul [1,64,784] x [1,784,128] (K = 784) in a 16-entry signed tape,
 * where the defender (solver) committed one wrong output element. Timed as
 * judgeClaim (what the runtime runs) and as the Arbitration.adjudicate
 * extrinsic on the runtime with a task and an open dispute on chain.
 */
async function adjudicationBench () {
  await cryptoWaitReady()
  const runtime = WASM_RUNTIME
  const [M, K, N] = [64, 784, 128]
  const r = rand(7)
  const A: TensorData = { shape: [1, M, K], dtype: 'float32', values: Float32Array.from({ length: M * K }, r) }
  const B: TensorData = { shape: [1, K, N], dtype: 'float32', values: Float32Array.from({ length: K * N }, r) }
  const op: OpShape & { kernel: string, attrs: Record<string, unknown> } = { kernel: 'BatchMatMul', attrs: { transposeA: false, transposeB: false }, inputs: [{ shape: A.shape, dtype: 'float32' }, { shape: B.shape, dtype: 'float32' }], output: { shape: [1, M, N], dtype: 'float32' }, outputIndex: 0 }
  if (!reference.supportsElement(runtime, op.kernel)) throw new Error(`protocols/reference has no ${op.kernel} for ${runtime}`)
  const colsB = Array.from({ length: N }, (_, j) => Float32Array.from({ length: K }, (_, k) => B.values[k * N + j]))
  const operandValues = (f: number): Array<TensorData['values']> => reference.elementOperands(runtime, op, f).map(o => o.input === 0 ? A.values.subarray(o.index * K, (o.index + 1) * K) : colsB[o.index])
  // whole op on chain (the alternative to a single-element claim): commit A, B, C and recompute every element
  const C: TensorData = { shape: [1, M, N], dtype: 'float32', values: new Float32Array(M * N) }
  const wholeOp = () => {
    commitTensor(A); commitTensor(B)
    for (let f = 0; f < M * N; f++) C.values[f] = reference.computeElement(runtime, op, f, operandValues(f))
    return commitTensor(C).root
  }
  const wholeOpMs = timeIt(3, wholeOp)
  // the defender's output: one element wrong by one ulp-ish
  const f = 5 * N + 17
  const bad: TensorData = { ...C, values: C.values.slice() }; bad.values[f] += 1e-3
  const entry = (index: number): TapeEntry => ({
    index, kernel: op.kernel, attrs: op.attrs,
    inputs: [{ name: 'a', ref: { kind: 'state', index: 0 }, dtype: 'float32', shape: A.shape, commitment: toHex(commitTensor(A).root) }, { name: 'b', ref: { kind: 'state', index: 1 }, dtype: 'float32', shape: B.shape, commitment: toHex(commitTensor(B).root) }],
    outputs: [{ dtype: 'float32', shape: bad.shape, commitment: toHex(commitTensor(bad).root) }]
  })
  const entries = Array.from({ length: 16 }, (_, i) => entry(i))
  const kr = new Keyring({ type: 'sr25519' })
  const bob = kr.addFromUri('//Bob'); const dave = kr.addFromUri('//Dave')
  // a real (admissible) mlp program: submit_task checks it, the claim reads runtime and data order from it
  const program = programBytes(newProgram({ model: 'mlp', runtime, seed: 1, batchSize: M, steps: 7, checkpointEvery: 1, dataset: { kind: 'synthetic', name: 'bench', sha256: 'ab'.repeat(32), trainSize: 60000, testSize: 0, rowSize: K, classes: 10, syntheticSeed: 1 } }))
  const step = 3
  const stateRoots = Array.from({ length: 8 }, (_, i) => toHex(sha256(Uint8Array.of(i))))
  // block 1's parent hash is what the runtime keeps as the genesis hash; signatures are bound to it and the task
  const genesis = '0x' + '01'.repeat(32)
  const D = new DefenderGame({ disputeId: 0, genesis: hexToU8a(genesis), taskId: 0, step, entries, tensor: (_e: unknown, io: string, k: number) => io === 'out' ? bad : (k === 0 ? A : B), account: bob.publicKey, sign: (m: Uint8Array) => bob.sign(m), stateRoots })
  const ei = 2
  const levels = treeLevels(entries.map(e => sha256(encodeEntryBytes(e))))
  const row = Math.floor(f / N)
  const claim: Claim = {
    v: 1, kind: 'element', commit: D.commit(), index: ei, entry: encodeEntryBytes(entries[ei]), path: pathWith(levels, new Map(), ei), program, flat: f,
    slice: proveSlice(bad, 'row', row),
    operands: reference.elementOperands(runtime, op, f).map(o => proveSlice(o.input === 0 ? A : B, o.axis, o.index))
  }
  const bytes = encodeClaim(claim)
  const proofRoot = merkleRoot(stateRoots.map(fromHex))
  const env: JudgeEnv = {
    genesis: hexToU8a(genesis), taskId: 0, stepCount: 7, disputeId: 0, step, challenger: dave.publicKey, defender: bob.publicKey, caller: 'challenger', programHash: sha256(program),
    datasetRoot: new Uint8Array(32), skeletonRoot: new Uint8Array(32), proofRoot, reference,
    verify: (m: Uint8Array, s: Uint8Array, p: Uint8Array) => { try { return sr25519Verify(m, s, p) } catch { return false } }
  }
  const ruling = judgeClaim(env, decodeClaim(bytes))
  if (ruling.winner !== 'challenger' || ruling.kind !== 'element') throw new Error(`judgeClaim ruled ${JSON.stringify(ruling)}`)
  const judgeMs = timeIt(100, () => judgeClaim(env, decodeClaim(bytes)))
  const wasmEnv: JudgeEnv = { ...env, verify: (m: Uint8Array, s: Uint8Array, p: Uint8Array) => verifySignature({ kind: 'Sr25519', message: m, signature: s, publicKey: p }) }
  if (judgeClaim(wasmEnv, decodeClaim(bytes)).winner !== 'challenger') throw new Error('judgeClaim with the wasm verifier ruled differently')
  const judgeWasmMs = timeIt(200, () => judgeClaim(wasmEnv, decodeClaim(bytes)))
  const elementOnlyMs = timeIt(500, () => reference.computeElement(runtime, op, f, operandValues(f)))

  // the same claim through the runtime: Arbitration.adjudicate with the task and dispute on chain
  const author = RandomnessAuthor.fromSeed('0x' + '5a'.repeat(32))
  const rt = new Runtime({ ...await devGenesis({}), randomnessAuthor: author.publicKey }, reference)
  const reg = rt.types.registry
  const base = new Map<string, any>()
  for (const [k, v] of rt.genesisState().changes) if (v !== null) base.set(k, v)
  let number = 0
  const reader = { get: (k: string) => base.get(k) }
  const call = (section: string, method: string, args: Record<string, unknown>) => {
    const p = rt.types.pallets.find(x => x.name === section); const c = p?.calls.find(x => x.name === method)
    if (p === undefined || c === undefined) throw new Error(`no call ${section}.${method}`)
    const snake = Object.fromEntries(Object.entries(args).map(([k, v]) => [k.replace(/[A-Z]/g, x => '_' + x.toLowerCase()), v]))
    return reg.createType('Call', { callIndex: [p.index, c.index], args: snake })
  }
  type Who = { publicKey: Uint8Array }
  const block = (calls: Array<[Who, string, string, Record<string, unknown>]>): void => {
    number++
    const b = rt.initializeBlock(reader, { number, parentHash: '0x' + (number % 256).toString(16).padStart(2, '0').repeat(32), randomness: author.sign(rt.previousRandomness(reader), number) })
    for (const [who, section, method, args] of calls) {
      const err = b.applyCall(u8aToHex(who.publicKey), call(section, method, args))
      if (err !== undefined) throw new Error(`${section}.${method} failed: ${JSON.stringify(err)}`)
    }
    b.finalize()
    for (const [k, v] of b.state.changes) { if (v === null) base.delete(k); else base.set(k, v) }
  }
  // the peer key signs its binding to the account, for this genesis
  const register = (who: Who, name: string, roles: number): [Who, string, string, Record<string, unknown>] => {
    const key = ed25519PairFromSeed(blake2AsU8a(`bench peer ${name}`, 256))
    const sig = ed25519Sign(peerBindingPayload(hexToU8a(genesis), who.publicKey), key)
    return [who, 'Arbitration', 'register_node', { peerId: u8aToHex(new TextEncoder().encode(peerIdOfEd25519(key.publicKey))), roles, stake: 10_000n * UNIT, peerSig: u8aToHex(sig) }]
  }
  const alice = kr.addFromUri('//Alice')
  block([register(bob, 'Bob', 2), register(dave, 'Dave', 4 | 8)])
  block([[alice, 'Arbitration', 'submit_task', { programHash: u8aToHex(sha256(program)), program: u8aToHex(program), datasetRoot: u8aToHex(new Uint8Array(32)), skeletonRoot: u8aToHex(merkleRoot(entries.map(e => sha256(encodeEntryBytes(e))))), steps: 7, checkpointEvery: 1, escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 1, challengeWindow: 50, solveTimeout: 20 }]])
  block([])
  block([[bob, 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: u8aToHex(proofRoot), finalStateRoot: '0x' + stateRoots[7], stepCount: 7, checkpoints: [] }]])
  block([[dave, 'Arbitration', 'open_dispute', { taskId: 0, defender: u8aToHex(bob.publicKey), kind: 'SolverProof', disputedStep: step }]])
  const adjCall = call('Arbitration', 'adjudicate', { disputeId: 0, claim: u8aToHex(bytes) })
  const dave32 = u8aToHex(dave.publicKey)
  // each run applies the call to the same pre-state in a fresh block; only the call is timed
  let spent = 0
  const nextRandomness = author.sign(rt.previousRandomness(reader), number + 1)
  const once = (): { err: unknown, events: string[] } => {
    const b = rt.initializeBlock(reader, { number: number + 1, parentHash: '0x' + '77'.repeat(32), randomness: nextRandomness })
    const mark = b.ctx.events.length
    const t = performance.now()
    const err = b.applyCall(dave32, adjCall)
    spent += performance.now() - t
    return { err, events: b.ctx.events.slice(mark).map((e: any) => Object.keys(Object.values(e.event)[0] as object)[0]) }
  }
  const res = once()
  if (res.err !== undefined || !res.events.includes('Adjudicated')) throw new Error(`adjudicate failed: ${JSON.stringify(res)}`)
  for (let i = 0; i < 20; i++) once()
  spent = 0
  for (let i = 0; i < 100; i++) once()
  const extrinsicMs = spent / 100
  return {
    kernel: op.kernel, K, judgeMs, judgeWasmMs, elementOnlyMs, extrinsicMs, claimBytes: bytes.length, wholeOpMs,
    wholeOpInputBytes: (M * K + K * N + M * N) * 4, ruling: ruling.reason
  }
}

export { transferBench, adjudicationBench }

const adj = ONLY === 'transfers' ? undefined : await adjudicationBench()
if (adj !== undefined) console.log(JSON.stringify({ adjudication: adj }, null, 2))
const tr = ONLY === 'adjudication' ? undefined : await transferBench()
if (tr !== undefined) console.log(JSON.stringify({ load0: tr.load0, load1: tr.load1 }))
if (WRITE && adj !== undefined && tr !== undefined) writeSection('Chain', report(adj, tr))

function report (adj: Awaited<ReturnType<typeof adjudicationBench>>, tr: Awaited<ReturnType<typeof transferBench>>): string {
  const f0 = (x: number): string => x.toFixed(0)
  const f2 = (x: number): string => x < 0.1 ? x.toFixed(3) : x.toFixed(2)
  const load = (l: number[]): string => l.map(x => x.toFixed(1)).join(' / ')
  const head = tr.runs.find(r => r.variant === tr.variants[0].name)
  const rows = tr.runs.map(r => `| ${r.variant} | ${r.txs} | ${r.timedOut ? `≥ ${f0(r.sustainedPerSec)} (${r.included}/${r.txs} in ${LIMIT_S} s)` : `**${f0(r.sustainedPerSec)}**`} | ${f0(r.admitPerSec)} | ${r.perBlock.length <= 8 ? r.perBlock.join(', ') : `${r.perBlock.length} blocks, max ${Math.max(...r.perBlock)}`} | ${r.chainCpuS.toFixed(1)} | ${r.clientCpuS.toFixed(2)} |`)
  const span = (rs: typeof tr.runs): string => rs.length === 0 ? 'n/a' : `${f0(Math.min(...rs.map(r => r.sustainedPerSec)))}–${f0(Math.max(...rs.map(r => r.sustainedPerSec)))}/s`
  const isOld = (r: { variant: string }): boolean => r.variant.startsWith('old path')
  const fresh = tr.runs.filter(r => !isOld(r))
  const met = fresh.every(r => !r.timedOut && r.sustainedPerSec >= 500)
  return `
**Result: sustained transfers ${span(fresh)} over ${fresh.length} runs of this chain (goal ≥ 500/s: ${met ? 'met in every run' : '**not met in every run**'})${tr.runs.some(isOld) ? `; the old path in the same run: ${span(tr.runs.filter(isOld))}` : ''}. One element adjudication (judgeClaim, K = ${adj.K}): ${f2(adj.judgeWasmMs)} ms (goal < 5 ms: ${adj.judgeWasmMs < 5 ? 'met' : '**not met**'}).**

Machine: ${machine()}. Run: \`npm run bench -- chain\` (test/bench/chain.bench.ts; \`--baseline <checkout>@<label>\`
adds the chain of an older build to the same run). Load average (1/5/15 min) ${load(tr.load0)} before the transfer runs and
${load(tr.load1)} after: the 2 cores were shared with other engineers' jobs, so compare the rows of one run with each other.

**How transfers are measured.** Each row starts a fresh chain process (\`proofswarm chain --block-time 1000\`).
The bench signs ${head?.txs ?? TXS} \`transfer_keep_alive\` from 14 dev accounts (immortal era, nonces from 0) *before* the
timed window, then pushes all of them at once, pipelined over 4 raw WebSockets (\`author_submitExtrinsic\`, no
@polkadot/api in the window), and follows inclusion by \`chain_subscribeNewHeads\` + \`chain_getBlock\`.
Sustained rate = included transfers / (arrival of the block holding the last one − first submission), so it counts
admission, block building and the 1 s block cadence. "Admission" = transfers / time until the last submission was
answered (in the pool). Chain CPU = user + system seconds of the chain process (all threads) during the window; the
bench client's own CPU is shown too, to show the figure measures the chain.

| chain | transfers | sustained transfers/s (goal ≥ 500) | admission/s | transfers per block | chain CPU s | client CPU s |
|---|---|---|---|---|---|---|
${rows.join('\n')}

**Adjudication, through the real path.** A protocols/dispute \`element\` claim against the mlp's first layer
(\`${adj.kernel}\` [1,64,784]×[1,784,128], K = ${adj.K}) in a 16-entry tape signed by the defender, whose
committed output has one wrong element; the claim carries the entry with its tape path, the program bytes, the
defender's output row and the two operand slices with Merkle proofs (${adj.claimBytes} bytes of CBOR).

| measure | result | goal |
|---|---|---|
| \`judgeClaim\` (CBOR decode, the defender's sr25519 signature, 4 Merkle proofs, program hash, one element by protocols/reference, ruling) | **${f2(adj.judgeWasmMs)} ms** (with util-crypto's pure-JS sr25519, as before this round: ${f2(adj.judgeMs)} ms) | < 5 ms |
| the \`Arbitration.adjudicate\` extrinsic on the runtime (SCALE decode of the call, judgeClaim, slashing, events) | ${f2(adj.extrinsicMs)} ms | |
| of which the element itself (one K = 784 dot product by protocols/reference) | ${f2(adj.elementOnlyMs)} ms | |
| whole op instead (commit A, B, C + recompute all 8192 elements), ${(adj.wholeOpInputBytes / 1024).toFixed(0)} KiB of operands | ${f0(adj.wholeOpMs)} ms | |
| claim size | ${(adj.claimBytes / 1024).toFixed(1)} KiB vs ${(adj.wholeOpInputBytes / 1024).toFixed(0)} KiB for the whole op | ≤ 64 KiB |

Notes. Profiled with \`--profile <dir>\` (node --cpu-prof on the chain process). Before this round
(session 1's chain, 329/s) 60 % of the chain's CPU went to block building, not signatures: the ready loop re-applied
out-of-order nonces pass after pass, and every AccountInfo read/write and storage key went through polkadot.js
createType (~0.1–0.4 ms each); admission spent ~0.85 ms in sr25519 and ~0.35 ms decoding each extrinsic twice.
Now transfers are parsed by hand (decoded once; the plain call is reused in apply), nonces are taken per sender
in runs (gaps wait in the future queue), AccountInfo/event fields have byte-exact hand codecs (tested against
the registry), storage keys and decoded storage values are memoised, and sr25519 runs in a worker-thread pool (cores − 1 threads, at least one) with admission
kept in arrival order. With verification inline, sr25519 is ~55 % of the chain's CPU and a burst of submissions
holds the event loop, so blocks stall during it (first block ~200 transfers, the next the 8000 cap); with workers
the main thread idles ~40 % and blocks keep coming during a burst. On 2 cores shared with other jobs the two modes'
rates overlap from run to run (in one quieter run, load ≈ 8: 1 worker 2180/s, 2 workers 2145/s, inline 1685/s), so
the pool's gain is modest here; the decisive change was block building and decoding. Adjudication now verifies the defender's signature
with the same wasm sr25519 as the pool (util-crypto's pure-JS one cost ~4 ms of each adjudicate), and the
remembered storage values took the rest of \`Arbitration.adjudicate\` from ~5 ms to about the cost of judgeClaim.
The old path's rate falls with the number of transfers (its block builder retried out-of-order nonces in full
passes: 329/s with 4000 transfers on a quiet machine in the previous round).
`
}
process.exit(0)
