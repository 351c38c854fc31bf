import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { Keyring } from '@polkadot/keyring'
import { cryptoWaitReady, sr25519Verify } from '@polkadot/util-crypto'
import { proveSlice, type TensorData } from '../../../protocols/commit/tensor.js'
import { MAX_MESSAGE_BYTES, signMsg, verifySigned, type Signed } from '../../../protocols/dispute/index.js'
import { anyFault, parseNodeFaults, trainFaults, tapeFaults } from '../../../node/dispute/faults.js'
import { decodeTapeFile, encodeTapeFile, type TapeFile } from '../../../node/engine/tape-file.js'
import { DISPUTE_PROTOCOL, SILENT, decodeRequest, decodeResponse, encodeRequest, encodeResponse, request, serve, type DisputeRequest } from '../../../node/dispute/transport.js'
import { createHost, type Host } from '../../../node/p2p/host.js'
import { lpStream } from '@libp2p/utils'

// The node side of disputes, below the chain: fault specs, the tape file the
// tape child hands to the peer, and the request/response transport over real
// libp2p hosts on 127.0.0.1 (signed messages, oversized frames, silence).

describe('fault specs (join --fault)', () => {
  it('parses every fault and turns them into the faults of engine jobs', () => {
    const f = parseNodeFaults(['tamper-op=BatchMatMul@8', 'tamper-weight', 'tamper-weight@3', 'lie-in-bisection', 'silent'])
    expect(f).toEqual({ ops: [{ kernel: 'BatchMatMul', step: 8 }], weights: [1, 3], lie: true, silent: true })
    expect(anyFault(f)).toBe(true)
    expect(anyFault(parseNodeFaults([]))).toBe(false)
    expect(tapeFaults(f)).toEqual({ ops: [{ kernel: 'BatchMatMul', step: 8 }], weights: [1, 3] })
    expect(trainFaults(f, null)).toEqual({ ops: [{ kernel: 'BatchMatMul', step: 8 }], weights: [1, 3] })
  })

  it('forced errors at on-chain steps f only mark leaves of the training job: no state change, nothing for a tape job to re-enact', () => {
    expect(trainFaults(parseNodeFaults([]), [7])).toEqual({ ops: [], weights: [], forcedSteps: [7] })
    expect(trainFaults(parseNodeFaults([]), [3, 7])).toEqual({ ops: [], weights: [], forcedSteps: [3, 7] })
    expect(trainFaults(parseNodeFaults([]), [])).toEqual({ ops: [], weights: [] })
    expect(trainFaults(parseNodeFaults(['tamper-weight@8']), [7])).toEqual({ ops: [], weights: [8], forcedSteps: [7] })
    expect(tapeFaults(parseNodeFaults([]))).toEqual({ ops: [], weights: [] })
  })

  it('refuses unknown or malformed specs with a clear message', () => {
    expect(() => parseNodeFaults(['tamper-op=BatchMatMul'])).toThrow(/<kernel>@<step>/)
    expect(() => parseNodeFaults(['tamper-op=Relu@0'])).toThrow(/≥ 1/)
    expect(() => parseNodeFaults(['explode'])).toThrow(/unknown fault "explode"/)
    expect(() => parseNodeFaults(['tamper-weight@x'])).toThrow(/unknown fault/)
    expect(() => parseNodeFaults(['fake-divergence@0'])).toThrow(/unknown fault/)
  })

  it('NaN faults are the training job\'s only (a tape job tapes whatever the step holds)', () => {
    const f = parseNodeFaults(['train-through-nan', 'fake-divergence@3'])
    expect(f).toMatchObject({ nanThrough: true, fakeDivergence: 3 })
    expect(anyFault(f)).toBe(true)
    expect(tapeFaults(f)).toEqual({ ops: [], weights: [] })
    expect(trainFaults(f, [2])).toEqual({ ops: [], weights: [], forcedSteps: [2], nanThrough: true, fakeDivergence: 3 })
  })
})

describe('tape file', () => {
  it('round-trips entries, tensor values, leaves and batch-row proofs', () => {
    const a: TensorData = { shape: [2, 3], dtype: 'float32', values: new Float32Array([1, 2, 3, 4, 5, 6.5]) }
    const i: TensorData = { shape: [3], dtype: 'int32', values: new Int32Array([7, -8, 9]) }
    const f: TapeFile = {
      step: 4,
      entries: [{ index: 0, kernel: 'Relu', attrs: {}, inputs: [{ name: 'x', ref: { kind: 'state', index: 0 }, dtype: 'float32', shape: [2, 3], commitment: 'ab'.repeat(32) }], outputs: [{ dtype: 'float32', shape: [2, 3], commitment: 'cd'.repeat(32) }] }],
      values: [{ inputs: [a], outputs: [i] }],
      stateRootBefore: '01'.repeat(32),
      stateRootAfter: '02'.repeat(32),
      preLeaves: [new Uint8Array(32).fill(3)],
      batchRows: [1, 0],
      dataset: { xRoot: new Uint8Array(32).fill(4), yRoot: new Uint8Array(32).fill(5), rows: [{ row: 1, x: proveSlice(a, 'row', 1), y: proveSlice(a, 'row', 0) }] }
    }
    const g = decodeTapeFile(encodeTapeFile(f))
    expect(g.step).toBe(4)
    expect(g.entries).toEqual(f.entries)
    expect([...g.values[0].inputs[0].values]).toEqual([1, 2, 3, 4, 5, 6.5])
    expect(g.values[0].outputs[0].values).toBeInstanceOf(Int32Array)
    expect([...g.values[0].outputs[0].values]).toEqual([7, -8, 9])
    expect(g.preLeaves[0]).toEqual(f.preLeaves[0])
    expect(g.batchRows).toEqual([1, 0])
    expect(g.dataset!.rows[0].x).toEqual(f.dataset!.rows[0].x)
    expect(() => decodeTapeFile(new Uint8Array([0xa1, 0x61, 0x76, 0x02]))).toThrow(/version 1/)
  })
})

describe('transport /proofswarm/dispute/3.0.0 over libp2p', () => {
  let server: Host
  let client: Host
  let silent = false
  const kr = new Keyring({ type: 'sr25519' })
  let commit: Signed
  const ctx = { genesis: new Uint8Array(32).fill(0x11), taskId: 2, disputeId: 3 }

  beforeAll(async () => {
    await cryptoWaitReady()
    const bob = kr.addFromUri('//Bob')
    commit = signMsg({ t: 'commit', d: 3, step: 7, traceRoot: new Uint8Array(32).fill(9), depth: 7, seq: 0, prev: new Uint8Array(32) }, bob.publicKey, m => bob.sign(m), ctx)
    ;[server, client] = await Promise.all([0, 1].map(async () => await createHost({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [], privateNetwork: true })))
    await serve(server, async (req: DisputeRequest) => {
      if (silent) return { err: SILENT }
      if (req.hello === true) return { m: commit }
      return { err: `unexpected move of ${req.m!.m.length} bytes` }
    }, () => {})
    await client.peerStore.merge(server.peerId, { multiaddrs: server.getMultiaddrs() })
  }, 30_000)

  afterAll(async () => {
    await Promise.all([server?.stop(), client?.stop()])
  })

  it('codec: requests and responses round-trip; garbage is refused', () => {
    expect(decodeRequest(encodeRequest({ d: 5, hello: true }))).toEqual({ d: 5, hello: true })
    const r = decodeRequest(encodeRequest({ d: 5, m: commit }))
    expect(r.m!.m).toEqual(commit.m)
    expect(decodeResponse(encodeResponse({ end: 'over' }))).toEqual({ end: 'over' })
    // the announcement of a coming dispute (the defender tapes the step at once)
    expect(decodeRequest(encodeRequest({ d: 0, prepare: { task: 4, step: 7 } }))).toEqual({ d: 0, prepare: { task: 4, step: 7 } })
    expect(() => decodeRequest(encodeRequest({ d: 0, prepare: { task: -1, step: 7 } }))).toThrow(/bad prepare/)
    expect(() => decodeRequest(new Uint8Array([0xa1, 0x61, 0x64, 0x20]))).toThrow(/bad dispute request/)
    expect(() => decodeRequest(encodeRequest({ d: 1, m: { ...commit, s: new Uint8Array(3) } }))).toThrow(/malformed signed message/)
  })

  it('a request gets the signed answer, which verifies against the author account', async () => {
    const res = await request(client, server.peerId.toString(), { d: 3, hello: true }, 10_000)
    const m = verifySigned(res.m!, kr.addFromUri('//Bob').publicKey, sr25519Verify, ctx)
    expect(m).toMatchObject({ t: 'commit', d: 3, step: 7, depth: 7, seq: 0 })
    // signed by Bob, not by Dave: refused
    expect(() => verifySigned(res.m!, kr.addFromUri('//Dave').publicKey, sr25519Verify, ctx)).toThrow(/another account/)
    // the same bytes in another chain's, task's or dispute's context: refused
    expect(() => verifySigned(res.m!, kr.addFromUri('//Bob').publicKey, sr25519Verify, { ...ctx, genesis: new Uint8Array(32).fill(0x22) })).toThrow(/bad signature/)
    expect(() => verifySigned(res.m!, kr.addFromUri('//Bob').publicKey, sr25519Verify, { ...ctx, taskId: 1 })).toThrow(/bad signature/)
    expect(() => verifySigned(res.m!, kr.addFromUri('//Bob').publicKey, sr25519Verify, { ...ctx, disputeId: 4 })).toThrow(/another dispute/)
  })

  it('an oversized frame is refused with an error answer', async () => {
    const stream = await client.dialProtocol(server.peerId, DISPUTE_PROTOCOL)
    const lp = lpStream(stream, { maxDataLength: 1 << 20 })
    await lp.write(new Uint8Array(MAX_MESSAGE_BYTES + 8192))
    const res = decodeResponse((await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray())
    expect(res.err).toMatch(/length|data/i)
    await stream.close().catch(() => {})
  })

  it('a silent defender answers nothing: the request times out', async () => {
    silent = true
    const t0 = Date.now()
    await expect(request(client, server.peerId.toString(), { d: 3, hello: true }, 1500)).rejects.toThrow()
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400)
    silent = false
  })
})
