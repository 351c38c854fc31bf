import { describe, expect, it } from 'vitest'
import { deserialize, serialize } from 'node:v8'
import { checkResult, parseMessage, parseRequest } from '../../../node/engine/protocol-check.js'
import { EngineProtocolError, type EngineMessage } from '../../../node/engine/protocol.js'

// The engine protocol's messages are checked on receipt: what is not one of
// them is an EngineProtocolError naming the field, and what is one crosses the
// IPC channel (structured clone, fork's 'advanced' serialization) unchanged.

const wire = <T>(v: T): unknown => deserialize(serialize(v))

describe('engine requests', () => {
  it('accepts every kind of job as the host sends it', () => {
    const jobs = [
      { id: 1, kind: 'train', taskFile: '/t/task.json', outDir: '/t/run', resume: true, datasetDir: undefined, faults: { ops: [{ kernel: 'BatchMatMul', step: 3 }], weights: [1], nanThrough: true, fakeDivergence: 4 } },
      { id: 2, kind: 'evaluate', modelDir: '/t/run', backend: 'wasm' },
      { id: 3, kind: 'commitments', taskFile: '/t/task.json' },
      { id: 4, kind: 'tape', runDir: '/t/run', step: 7, out: '/t/tape.cbor', datasetProofs: true, faults: { ops: [], weights: [7] } },
      { id: 5, kind: 'warm', taskFile: '/t/task.json', datasetDir: '/d' },
      { id: 6, kind: 'replay', runDir: '/t/run', steps: [1, 5, 9], checkpointLayout: 'program' },
      { id: 7, kind: 'divergence', runDir: '/t/run', checkpointLayout: 'manifest' }
    ]
    for (const j of jobs) expect(parseRequest(wire(j))).toEqual(j)
  })

  it('refuses an unknown kind, a missing or mistyped field and an unknown field, naming it', () => {
    const bad = (v: unknown): string => {
      try { parseRequest(v) } catch (e) { expect(e).toBeInstanceOf(EngineProtocolError); return (e as Error).message }
      throw new Error('accepted')
    }
    expect(bad({ id: 1, kind: 'explode' })).toMatch(/request\.kind: expected one of train, evaluate/)
    expect(bad('train')).toMatch(/request: expected an object/)
    expect(bad({ id: 1, kind: 'replay', runDir: '/r' })).toMatch(/replay request\.steps: expected an array/)
    expect(bad({ id: 1, kind: 'replay', runDir: '/r', steps: [1, 2.5] })).toMatch(/replay request\.steps\[1\]: expected an integer/)
    expect(bad({ id: 1, kind: 'replay', runDir: '/r', steps: [1], checkpointLayout: 'zip' })).toMatch(/checkpointLayout: expected one of manifest, program/)
    expect(bad({ id: 1, kind: 'warm', taskFile: '/t', dataset: '/d' })).toMatch(/warm request\.dataset: unknown field/)
    expect(bad({ id: -2, kind: 'warm', taskFile: '/t' })).toMatch(/warm request\.id: expected an integer ≥ 0/)
    expect(bad({ id: 1, kind: 'train', taskFile: '/t', outDir: '/o', faults: { ops: ['BatchMatMul@3'], weights: [] } })).toMatch(/train request\.faults\.ops\[0\]: expected an object/)
    expect(bad({ id: 1, kind: 'evaluate', modelDir: '/m', backend: 'gpu' })).toMatch(/evaluate request\.backend: expected one of auto, wasm/)
  })
})

describe('engine messages', () => {
  it('a progress event round-trips through the channel, NaN and Infinity included', () => {
    const events: EngineMessage[] = [
      { type: 'progress', id: 3, step: 65, steps: 300, loss: 0.0015, samplesPerSec: 1247.5, etaSec: 12.25 },
      { type: 'progress', id: 3, step: 1, steps: 300, loss: NaN, samplesPerSec: 0, etaSec: Infinity },
      { type: 'checkpoint', id: 3, step: 60 },
      { type: 'log', id: 3, level: 'warn', message: 'FAULT INJECTION: corrupted BatchMatMul@3' },
      { type: 'error', id: -1, message: 'engine protocol: request: expected an object' },
      { type: 'ready' }
    ]
    for (const e of events) expect(parseMessage(wire(e))).toEqual(e)
  })

  it('a result is checked against its job kind', () => {
    const replay = { results: [{ step: 3, fromCheckpoint: 0, match: true, expected: 'ab', actual: 'ab', seconds: 0.1 }] }
    expect(parseMessage(wire({ type: 'done', id: 1, kind: 'replay', result: replay }))).toMatchObject({ result: replay })
    expect(checkResult('replay', { unavailable: { step: 10, reason: 'hash mismatch' } })).toEqual({ unavailable: { step: 10, reason: 'hash mismatch' } })
    expect(checkResult('divergence', { check: { step: 4, ok: true, reason: 'first NaN where the proof says', found: { entry: 2, flat: 0, output: 0 } } }).check?.ok).toBe(true)
    // a replay outcome is not a training result, and a result missing a field is refused
    expect(() => parseMessage({ type: 'done', id: 1, kind: 'train', result: replay })).toThrow(/train result\.results: unknown field/)
    expect(() => parseMessage({ type: 'done', id: 1, kind: 'commitments', result: { skeletonRoot: 'aa' } })).toThrow(/commitments result\.datasetRoot: expected a string/)
    expect(() => checkResult('replay', { results: [{ step: 3, match: 'yes' }] })).toThrow(/replay result\.results\[0\]\.fromCheckpoint: expected an integer/)
    // with roots every m > 1 steps a replay names the segment it replayed
    const seg = { results: [{ ...replay.results[0], step: 8, segment: 1, firstMismatch: 8 }] }
    expect(checkResult('replay', seg)).toEqual(seg)
    expect(() => checkResult('replay', { results: [{ ...replay.results[0], segment: -1 }] })).toThrow(/replay result\.results\[0\]\.segment: expected an integer ≥ 0/)
  })

  it('refuses an unknown message type, and a progress event without its numbers', () => {
    expect(() => parseMessage({ type: 'stdout', line: '{"proofRoot":"00"}' })).toThrow(EngineProtocolError)
    expect(() => parseMessage({ type: 'stdout', line: '' })).toThrow(/message\.type: expected one of ready, progress/)
    expect(() => parseMessage({ type: 'progress', id: 1, step: '65/300' })).toThrow(/progress message\.step: expected an integer/)
    expect(() => parseMessage({ type: 'progress', id: 1, step: 65, steps: 300, loss: 0.1, samplesPerSec: 1, etaSec: 1, line: 'x' })).toThrow(/progress message\.line: unknown field/)
    expect(() => parseMessage(null)).toThrow(/message: expected an object/)
  })
})
