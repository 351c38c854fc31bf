// Dev chain benchmarks (plain script, run after `npm run build`):
//   node test/bench/chain.bench.mjs [--txs 4000]
// 1. sustained balance transfers per second with 1 s blocks (chain in its own process)
// 2. adjudication cost of one MatMul element with K = 784
// 3. adjudication cost of a whole MatMul op of the mlp's first layer ([64,784] x [784,128])
import '../../dist/node/polyfill.js'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import WebSocket from 'ws'
import { commitTensor, proveSlice } from '../../dist/protocols/commit/index.js'
import { adjudicateClaim } from '../../dist/devnet/chain/runtime/adjudication.js'
import { claimToScale } from '../../dist/node/chain/claim.js'

const arg = (n, d) => { const i = process.argv.indexOf(n); return i > 0 ? Number(process.argv[i + 1]) : d }
const TXS = arg('--txs', 4000)

async function loadReference () {
  try {
    const m = await import('../../dist/protocols/reference/index.js')
    if (m.supportsElement('tfjs-wasm@4.22.0-simd', 'MatMul')) return { ref: m, runtime: 'tfjs-wasm@4.22.0-simd', name: 'protocols/reference' }
  } catch {}
  // stand-in: sequential float32 dot product (wasm MatMul without transposes, batch 1)
  const ref = {
    supportsElement: () => true,
    elementOperands: (_r, op, f) => { const n = op.output.shape.at(-1); return [{ input: 0, axis: 'row', index: Math.floor(f / n) }, { input: 1, axis: 'col', index: f % n }] },
    computeElement: (_r, _op, _f, [a, b]) => { let acc = 0; for (let k = 0; k < a.length; k++) acc = Math.fround(acc + Math.fround(a[k] * b[k])); return acc }
  }
  return { ref, runtime: 'test', name: 'inline MatMul stand-in' }
}

function rand (seed) { let s = seed >>> 0; return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return (s / 2 ** 32) * 2 - 1 } }

async function adjudicationBench () {
  const { ref, runtime, name } = await loadReference()
  const [M, K, N] = [64, 784, 128]
  const r = rand(7)
  const A = { shape: [M, K], dtype: 'float32', values: Float32Array.from({ length: M * K }, r) }
  const B = { shape: [K, N], dtype: 'float32', values: Float32Array.from({ length: K * N }, r) }
  const op = { kernel: 'MatMul', attrs: { transposeA: false, transposeB: false }, inputs: [{ shape: [M, K], dtype: 'float32' }, { shape: [K, N], dtype: 'float32' }], output: { shape: [M, N], dtype: 'float32' } }
  const C = { shape: [M, N], dtype: 'float32', values: new Float32Array(M * N) }
  for (let f = 0; f < M * N; f++) {
    const [ra, cb] = ref.elementOperands(runtime, op, f)
    C.values[f] = ref.computeElement(runtime, op, f, [A.values.subarray(ra.index * K, (ra.index + 1) * K), Float32Array.from({ length: K }, (_, k) => B.values[k * N + cb.index])])
  }
  const f = 5 * N + 17
  const bad = { ...C, values: C.values.slice() }; bad.values[f] += 1e-3
  const plainClaim = claimToScale({
    runtime, op, flatIndex: f,
    inputRoots: [commitTensor(A).root, commitTensor(B).root],
    operands: [proveSlice(A, 'row', 5), proveSlice(B, 'col', 17)],
    challenger: { outputRoot: commitTensor(C).root, row: proveSlice(C, 'row', 5) },
    defender: { outputRoot: commitTensor(bad).root, row: proveSlice(bad, 'row', 5) }
  })
  // the runtime sees exactly this plain shape after SCALE decoding
  const json = JSON.stringify(plainClaim)
  const runs = 300
  for (let i = 0; i < 20; i++) adjudicateClaim(ref, JSON.parse(json))
  const claims = Array.from({ length: runs }, () => JSON.parse(json))
  let t = performance.now()
  let res
  for (const c of claims) res = adjudicateClaim(ref, c)
  const elementMs = (performance.now() - t) / runs
  if (res.computedBits !== res.challengerBits || res.defenderBits === res.computedBits) throw new Error('adjudication ruled wrongly')
  const claimBytes = (json.length - 2) / 2 // rough: hex dominates
  // whole op: commit both inputs and the output, recompute all M*N elements
  t = performance.now()
  commitTensor(A); commitTensor(B); commitTensor(C)
  const colsB = Array.from({ length: N }, (_, j) => Float32Array.from({ length: K }, (_, k) => B.values[k * N + j]))
  let mism = 0
  for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
    const v = ref.computeElement(runtime, op, i * N + j, [A.values.subarray(i * K, (i + 1) * K), colsB[j]])
    if (Math.fround(v) !== C.values[i * N + j]) mism++
  }
  const wholeMs = performance.now() - t
  if (mism !== 0) throw new Error('whole-op recompute mismatch')
  return { reference: name, elementMs, claimHexChars: json.length, wholeOpMs: wholeMs, wholeOpInputBytes: (M * K + K * N + M * N) * 4 }
}

async function transferBench () {
  await cryptoWaitReady()
  const dir = await mkdtemp(join(tmpdir(), 'ps-chain-bench-'))
  const proc = spawn(process.execPath, ['dist/node/cli/main.js', 'chain', '--port', '0', '--data-dir', dir, '--block-time', '1000', '--json', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const url = await new Promise((resolve, reject) => {
      proc.stdout.on('data', d => { const l = d.toString().split('\n').find(x => x.startsWith('{')); if (l) resolve(JSON.parse(l).url) })
      proc.once('exit', c => reject(new Error(`chain exited ${c}`)))
    })
    const api = await ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true })
    const kr = new Keyring({ type: 'sr25519' })
    const senders = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', 'Peer1', 'Peer2', 'Peer3', 'Peer4', 'Peer5', 'Peer6', 'Peer7', 'Peer8'].map(n => kr.addFromUri(`//${n}`))
    const dest = kr.addFromUri('//BenchSink').address
    const per = Math.ceil(TXS / senders.length)
    let t = performance.now()
    const signed = []
    for (let i = 0; i < per; i++) for (const s of senders) {
      if (signed.length >= TXS) break
      signed.push(api.tx.balances.transferKeepAlive(dest, 1_000_000_000n + BigInt(i)).sign(s, { nonce: i, era: 0, blockHash: api.genesisHash, genesisHash: api.genesisHash, runtimeVersion: api.runtimeVersion }).toHex())
    }
    const signMs = performance.now() - t
    const startBlock = (await api.rpc.chain.getHeader()).number.toNumber()
    // pipelined raw submissions over 4 sockets
    const sockets = await Promise.all(Array.from({ length: 4 }, () => new Promise((res, rej) => { const w = new WebSocket(url); w.once('open', () => res(w)); w.once('error', rej) })))
    let acked = 0; let errors = 0
    const done = new Promise(resolve => {
      for (const w of sockets) w.on('message', d => { const m = JSON.parse(d.toString()); if (m.error) errors++; if (++acked === signed.length) resolve() })
    })
    t = performance.now()
    signed.forEach((hex, i) => sockets[i % 4].send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'author_submitExtrinsic', params: [hex] })))
    await done
    const submitMs = performance.now() - t
    // wait until all are included, counting extrinsics per block
    const deadline = Date.now() + 120_000
    let included = 0; let lastBlock = startBlock; const perBlock = []
    while (included < signed.length - errors && Date.now() < deadline) {
      const head = (await api.rpc.chain.getHeader()).number.toNumber()
      for (let n = lastBlock + 1; n <= head; n++) {
        const b = await api.rpc.chain.getBlock(await api.rpc.chain.getBlockHash(n))
        included += b.block.extrinsics.length
        perBlock.push(b.block.extrinsics.length)
      }
      lastBlock = head
      await new Promise(r => setTimeout(r, 200))
    }
    const totalMs = performance.now() - t
    const sink = (await api.query.system.account(dest)).data.free.toBigInt()
    for (const w of sockets) w.close()
    await api.disconnect()
    const busy = perBlock.filter(x => x > 0)
    return { txs: signed.length, rejected: errors, included, signMs, submitMs, submitPerSec: signed.length / (submitMs / 1000), blocks: busy.length, perBlock: busy, sustainedPerSec: included / (totalMs / 1000), maxBlock: Math.max(...busy), sinkOk: sink > 0n }
  } finally {
    proc.kill('SIGTERM')
    await new Promise(r => proc.once('exit', r))
    await rm(dir, { recursive: true, force: true })
  }
}

const adj = await adjudicationBench()
console.log(JSON.stringify({ adjudication: adj }, null, 2))
const tr = await transferBench()
console.log(JSON.stringify({ transfers: tr }, null, 2))
process.exit(0)
