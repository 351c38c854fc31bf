import { describe, expect, it } from 'vitest'
import * as reference from '../../../protocols/reference/index.js'
import { conversionClaimBytes, stepRoom } from '../../../protocols/program/claim-room.js'
import { CHUNKED_STATE_JUDGED, MAX_ROOT_EVERY, ProgramError, admissibility, stateCommitmentName, stateIsChunked, WASM_RUNTIME, canonicalJson, mlpTopology, newProgram, programHash, rootEveryOf, validateProgram, type DatasetRef, type TaskProgram } from '../../../protocols/program/index.js'

const ds: DatasetRef = { kind: 'synthetic', name: 'synthetic', sha256: 'ab'.repeat(32), trainSize: 1000, testSize: 100, rowSize: 784, classes: 10, syntheticSeed: 1 }
const base = (): TaskProgram => newProgram({ model: 'mlp', dataset: ds, steps: 10 })
const mutate = (f: (p: any) => void): unknown => { const p = JSON.parse(JSON.stringify(base())); f(p); return p }

describe('protocols/program', () => {
  it('zoo programs validate, with weight shapes', () => {
    const m = validateProgram(base())
    expect(m.runtime).toBe(WASM_RUNTIME)
    expect(m.info.weights.map(w => w.shape)).toEqual([[784, 128], [128], [128, 10], [10]])
    expect(m.info.params).toBe(784 * 128 + 128 + 1290)
    const c = validateProgram(newProgram({ model: 'cnn', dataset: ds, steps: 5, optimizer: 'sgd' }))
    expect(c.info.inputShape).toEqual([28, 28, 1])
    expect(c.info.weights.map(w => w.shape)).toEqual([[3, 3, 1, 8], [8], [3, 3, 8, 16], [16], [400, 10], [10]])
  })

  it('rejects bad programs with clear errors', () => {
    expect(() => validateProgram(mutate(p => { p.steps = 0 }))).toThrow(/steps must be an integer/)
    expect(() => validateProgram(mutate(p => { p.runtime = 'tfjs-webgl@1' }))).toThrow(/unknown runtime/)
    expect(() => validateProgram(mutate(p => { p.model.topology.config.layers[0].class_name = 'LSTM' }))).toThrow(/unknown or unsupported layer/)
    expect(() => validateProgram(mutate(p => { p.model.topology.config.layers[0].config.batch_input_shape = [null, 100] }))).toThrow(/shape mismatch/)
    expect(() => validateProgram(mutate(p => { p.model.topology.config.layers[1].config.units = 7 }))).toThrow(/10 classes/)
    expect(() => validateProgram(mutate(p => { p.model.topology.config.layers[0].config.activation = 'gelu' }))).toThrow(/unsupported activation/)
    expect(() => validateProgram(mutate(p => { p.optimizer = { name: 'rmsprop', learningRate: 0.1 } }))).toThrow(/unknown optimizer/)
    expect(() => validateProgram(mutate(p => { p.batchSize = 5000 }))).toThrow(/batchSize/)
    expect(() => validateProgram(mutate(p => { p.extra = 1 }))).toThrow(/unknown program field/)
    expect(() => validateProgram(mutate(p => { p.dataset.sha256 = 'xyz' }))).toThrow(/sha256/)
    expect(() => validateProgram('nope')).toThrow(ProgramError)
    expect(() => newProgram({ model: 'resnet', dataset: ds, steps: 1 })).toThrow(/unknown model/)
  })

  it('rootEvery 1 is the program of before bit for bit; m > 1 is a valid program (whether a chain takes it is its max_root_every)', () => {
    const p = base()
    expect('rootEvery' in p).toBe(false)
    expect(rootEveryOf(p)).toBe(1)
    // asking for 1 writes nothing: the program, its hash and so every root and proof are unchanged
    const one = newProgram({ model: 'mlp', dataset: ds, steps: 10, rootEvery: 1 })
    expect(one).toEqual(p)
    expect(programHash(one)).toBe(programHash(p))
    expect(canonicalJson(one)).not.toMatch(/rootEvery/)
    // a hand-written 1 is valid (another program hash, the same behaviour)
    expect(rootEveryOf(validateProgram(mutate(q => { q.rootEvery = 1 })))).toBe(1)
    for (const bad of [0, -1, 1.5, '4', null, MAX_ROOT_EVERY + 1]) expect(() => validateProgram(mutate(q => { q.rootEvery = bad }))).toThrow(/rootEvery must be an integer in \[1, 64\]/)
    expect(() => validateProgram(mutate(q => { q.rootEvery = 3 }))).toThrow(/rootEvery 3 must divide checkpointEvery 100/)
    for (const m of [2, 4, 8, 64]) expect(rootEveryOf(validateProgram(mutate(q => { q.rootEvery = m; q.checkpointEvery = 128 })))).toBe(m)
    const four = newProgram({ model: 'mlp', dataset: ds, steps: 10, checkpointEvery: 4, rootEvery: 4 })
    expect(canonicalJson(four)).toMatch(/"rootEvery":4/)
    expect(programHash(four)).not.toBe(programHash(newProgram({ model: 'mlp', dataset: ds, steps: 10, checkpointEvery: 4 })))
  })

  it('stateCommitment: absent is the program of before bit for bit; "chunked" is validated and hashed; admissible where judged', () => {
    const p = base()
    expect('stateCommitment' in p).toBe(false)
    expect(stateIsChunked(p)).toBe(false)
    expect(stateCommitmentName(p)).toBe('row + column')
    expect(canonicalJson(p)).not.toMatch(/stateCommitment/)
    const c = newProgram({ model: 'mlp', dataset: ds, steps: 10, stateCommitment: 'chunked' })
    expect(canonicalJson(c)).toMatch(/"stateCommitment":"chunked"/)
    expect(stateIsChunked(validateProgram(c))).toBe(true)
    expect(stateCommitmentName(c)).toMatch(/^chunked/)
    expect(programHash(c)).not.toBe(programHash(p))
    for (const bad of ['Chunked', 'row-column', 'rowcol', '', null, 1, true, ['chunked'], { chunked: true }]) {
      expect(() => validateProgram(mutate(q => { q.stateCommitment = bad }))).toThrow(/stateCommitment must be "chunked" or absent \(row \+ column\), got /)
    }
    // this build judges chunked roots (the tape's conversions, the dispute's chunks, the chunk serve, the trainer's roots)
    expect(CHUNKED_STATE_JUDGED).toBe(true)
    expect(admissibility(validateProgram(c), reference.supportsElement).ok).toBe(true)
    // a build that did not would refuse it, with the reason
    const adm = admissibility(validateProgram(c), reference.supportsElement, false)
    expect(adm.ok).toBe(false)
    expect(adm.reason).toMatch(/state commitment "chunked" is not judged on chain yet/)
    expect(admissibility(validateProgram(p), reference.supportsElement).ok).toBe(true)
    // a chunked program's disputes also end in convert claims: one chunk and one row or column leaf of a state tensor
    const big = conversionClaimBytes([784, 128])
    expect(big).toBeGreaterThan(4096 + 784 * 4)
    expect(stepRoom(validateProgram(c)).claim.bytes).toBeGreaterThanOrEqual(big)
    const tiny = newProgram({ model: 'mlp', dataset: ds, steps: 10, batchSize: 1, stateCommitment: 'chunked' })
    const tinyRoom = stepRoom(validateProgram(tiny))
    expect(tinyRoom.leaf).toEqual({ bytes: 4096, what: 'a chunk of a state tensor' })
    expect(stepRoom(validateProgram({ ...tiny, stateCommitment: undefined })).leaf.bytes).toBeLessThan(4096)
  })

  it('program hash is canonical (key order independent) and content sensitive', () => {
    const p = base()
    const rev = (v: any): any => Array.isArray(v) ? v.map(rev) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).reverse().map(k => [k, rev(v[k])])) : v
    const shuffled = rev(p)
    expect(JSON.stringify(shuffled)).not.toBe(JSON.stringify(p))
    expect(programHash(shuffled)).toBe(programHash(p))
    expect(programHash({ ...p, seed: 2 })).not.toBe(programHash(p))
    expect(canonicalJson({ b: 1, a: [1, { d: undefined, c: 'x' }] })).toBe('{"a":[1,{"c":"x"}],"b":1}')
    expect(() => canonicalJson({ a: NaN })).toThrow(/non-finite/)
    expect(mlpTopology().config.layers).toHaveLength(2)
  })
})
