import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertBuilt, cliRunner } from '../helpers/procs.js'
import { WASM_RUNTIME } from '../../protocols/program/runtime.js'

// Runs the compiled CLI (`npm test` builds first) in separate OS processes.
const cli = cliRunner(60_000)
let dir: string

beforeAll(async () => {
  assertBuilt()
  dir = mkdtempSync(join(tmpdir(), 'ps-train-cli-'))
  // a root after every step (task new's default is every 8): the replays below check single steps against their roots;
  // the old runtime named (task new's default follows the machine's addon): its tape's kernel count is checked below
  const t = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '24', '--checkpoint-every', '8', '--root-every', '1', '--batch', '32', '--seed', '5', '--synthetic-size', '512', '--runtime', WASM_RUNTIME)
  expect(t.code).toBe(0)
  writeFileSync(join(dir, 'task.json'), t.stdout)
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('train CLI (separate processes)', () => {
  it('two processes give the same proof root; resume from a checkpoint too; replay and evaluate work', async () => {
    const task = join(dir, 'task.json')
    const [a, b] = await Promise.all([
      cli('train', '--task', task, '--out', join(dir, 'a'), '--json', '--log-level', 'warn'),
      cli('train', '--task', task, '--out', join(dir, 'b'), '--json', '--log-level', 'warn')
    ])
    expect(a.code, a.stderr).toBe(0); expect(b.code, b.stderr).toBe(0)
    const ja = JSON.parse(a.stdout); const jb = JSON.parse(b.stdout)
    expect(ja.proofRoot).toMatch(/^[0-9a-f]{64}$/)
    expect(jb.proofRoot).toBe(ja.proofRoot)
    expect(a.stderr).toMatch(/step 24\/24/)
    const proof = JSON.parse(readFileSync(join(dir, 'a', 'proof.json'), 'utf8'))
    expect(proof.stateRoots).toHaveLength(25)
    expect(proof.checkpoints.map((c: { step: number }) => c.step)).toEqual([0, 8, 16, 24])

    const c1 = await cli('train', '--task', task, '--out', join(dir, 'c'), '--until', '13', '--json', '--log-level', 'warn')
    expect(JSON.parse(c1.stdout)).toMatchObject({ completed: false, proofRoot: null })
    const c2 = await cli('train', '--task', task, '--out', join(dir, 'c'), '--resume', '--json', '--log-level', 'warn')
    expect(c2.code, c2.stderr).toBe(0)
    expect(JSON.parse(c2.stdout)).toMatchObject({ resumedFrom: 8, proofRoot: ja.proofRoot })

    const r = await cli('replay', '--proof', join(dir, 'a'), '--step', '11', '--tape', '--tape-out', join(dir, 'tape.json'), '--json', '--log-level', 'warn')
    expect(r.code, r.stderr).toBe(0)
    const rj = JSON.parse(r.stdout)
    expect(rj).toMatchObject({ step: 11, fromCheckpoint: 8, match: true })
    expect(rj.tape).toMatchObject({ kernels: 126, reexecutedBitwise: 126, mismatches: [], stateRootAfterMatches: true })
    const tj = JSON.parse(readFileSync(join(dir, 'tape.json'), 'utf8'))
    expect(tj.entries).toHaveLength(127)
    const { tapeRoot } = await import('../../protocols/tape/tape.js')
    expect(tapeRoot(tj.entries)).toBe(rj.tape.tapeRoot)

    // a tampered state root in the proof is reported as a mismatch (exit 2)
    const pf = join(dir, 'b', 'proof.json')
    const p = JSON.parse(readFileSync(pf, 'utf8'))
    p.stateRoots[11] = p.stateRoots[10]
    const { proofRootOf } = await import('../../protocols/pol/proof.js')
    p.proofRoot = proofRootOf(p.stateRoots)
    writeFileSync(pf, JSON.stringify(p))
    const bad = await cli('replay', '--proof', join(dir, 'b'), '--step', '11', '--json', '--log-level', 'warn')
    expect(bad.code).toBe(2)
    expect(JSON.parse(bad.stdout)).toMatchObject({ match: false, firstMismatch: 11 })

    // a verifier's sample in one engine: several steps, two in one interval, stopping at the first mismatch
    // (on b, root 11 was replaced: replaying to 12 matches root 12 but reports step 11)
    const many = await cli('replay', '--proof', join(dir, 'a'), '--steps', '3,6,13,24', '--json', '--log-level', 'warn')
    expect(many.code, many.stderr).toBe(0)
    expect(
      JSON.parse(many.stdout).results.map((x: { step: number, fromCheckpoint: number, match: boolean }) => [x.step, x.fromCheckpoint, x.match])
    ).toEqual([[3, 0, true], [6, 0, true], [13, 8, true], [24, 16, true]])
    const manyBad = await cli('replay', '--proof', join(dir, 'b'), '--steps', '5,12,20', '--json', '--log-level', 'warn')
    expect(manyBad.code).toBe(2)
    expect(
      JSON.parse(manyBad.stdout).results.map((x: { step: number, match: boolean, firstMismatch?: number }) => [x.step, x.match, x.firstMismatch ?? null])
    ).toEqual([[5, true, null], [12, true, 11]])

    const e = await cli('evaluate', '--model', join(dir, 'a'), '--json', '--log-level', 'warn')
    expect(e.code, e.stderr).toBe(0)
    expect(JSON.parse(e.stdout).accuracy).toBe(ja.accuracy)
  })

  it('--backend node without tfjs-node says so and falls back to wasm; cnn trains on wasm', async () => {
    const t = await cli('task', 'new', '--model', 'cnn', '--dataset', 'synthetic', '--steps', '3', '--batch', '8', '--optimizer', 'sgd', '--synthetic-size', '64', '--runtime', WASM_RUNTIME)
    expect(t.code, t.stderr).toBe(0)
    writeFileSync(join(dir, 'cnn.json'), t.stdout)
    const r = await cli('train', '--task', join(dir, 'cnn.json'), '--out', join(dir, 'cnn'), '--backend', 'node', '--json', '--log-level', 'info')
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/@tensorflow\/tfjs-node is not installed/)
    expect(r.stderr).toMatch(/backend wasm .*SIMD binary .*threads off.*fallback/)
    const j = JSON.parse(r.stdout)
    expect(j).toMatchObject({ backend: 'wasm', completed: true, proofWritten: true })
    // a wasm-pinned task trained on cpu writes no proof
    const c = await cli('train', '--task', join(dir, 'cnn.json'), '--out', join(dir, 'cnn-cpu'), '--backend', 'cpu', '--json', '--log-level', 'warn')
    expect(c.code, c.stderr).toBe(0)
    expect(JSON.parse(c.stdout)).toMatchObject({ backend: 'cpu', proofWritten: false, proofRoot: null })
    expect(c.stderr).toMatch(/without a proof-of-learning/)
  })

  it('a task pinned to tfjs-cpu@4.22.0 trains on cpu with a proof, and replays', async () => {
    // not verifiable on chain (no element references for most cpu kernels): refused unless for local use
    const refused = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '4', '--runtime', 'tfjs-cpu@4.22.0', '--synthetic-size', '64')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/task refused: not verifiable: runtime tfjs-cpu@4\.22\.0 has no element reference for .*_FusedMatMul.*--local/)
    const t = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '4', '--batch', '16', '--checkpoint-every', '2', '--runtime', 'tfjs-cpu@4.22.0', '--local', '--synthetic-size', '64')
    expect(t.code, t.stderr).toBe(0)
    expect(t.stderr).toMatch(/local-only program/)
    writeFileSync(join(dir, 'cpu.json'), t.stdout)
    const submit = await cli('submit', '--task', join(dir, 'cpu.json'))
    expect(submit.code).toBe(2)
    expect(submit.stderr).toMatch(/task refused: not verifiable/)
    const r = await cli('train', '--task', join(dir, 'cpu.json'), '--out', join(dir, 'cpu'), '--json', '--log-level', 'warn')
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ backend: 'cpu', runtime: 'tfjs-cpu@4.22.0', proofWritten: true })
    const p = await cli('replay', '--proof', join(dir, 'cpu'), '--step', '3', '--json', '--log-level', 'warn')
    expect(p.code, p.stderr).toBe(0)
    expect(JSON.parse(p.stdout)).toMatchObject({ match: true, fromCheckpoint: 2 })
  })

  it('bad input gives clear errors and a non-zero exit', async () => {
    const m = await cli('task', 'new', '--model', 'resnet', '--dataset', 'synthetic', '--steps', '3')
    expect(m.code).not.toBe(0); expect(m.stderr).toMatch(/unknown model "resnet"/)
    const s = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '0')
    expect(s.code).not.toBe(0); expect(s.stderr).toMatch(/--steps must be an integer in \[1, 500000\]/)
    const d = await cli('task', 'new', '--model', 'mlp', '--dataset', join(dir, 'nope'), '--steps', '3')
    expect(d.code).not.toBe(0); expect(d.stderr).toMatch(/does not exist/)
    const ok = await cli('task', 'check', join(dir, 'task.json'), '--json')
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ model: 'mlp', params: 101770, steps: 24, checkpointEvery: 8, rootEvery: 1, stateCommitment: 'row-column' })
    // chunked state roots: a valid program, shown by task check, verifiable on chain; task new writes it only when asked
    writeFileSync(join(dir, 'ch.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')), stateCommitment: 'chunked' }))
    const cc = await cli('task', 'check', join(dir, 'ch.json'))
    expect(cc.code, cc.stderr).toBe(0)
    expect(cc.stdout).toMatch(/state roots every step over chunked \(4 KiB chunks\) commitments/)
    expect(cc.stdout).toMatch(/verifiable on chain/)
    const cn = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '4', '--synthetic-size', '64', '--no-rows-root', '--state-commitment', 'chunked')
    expect(cn.code, cn.stderr).toBe(0); expect(JSON.parse(cn.stdout).stateCommitment).toBe('chunked')
    const dn = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '4', '--synthetic-size', '64', '--no-rows-root')
    expect(dn.code, dn.stderr).toBe(0); expect(JSON.parse(dn.stdout).stateCommitment).toBeUndefined()
    const cb = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '4', '--synthetic-size', '64', '--no-rows-root', '--state-commitment', 'rows')
    expect(cb.code).not.toBe(0); expect(cb.stderr).toMatch(/stateCommitment must be "chunked" or absent/)
    // a hand-written program with rootEvery 4: a valid program, trained with a root every 4 steps
    writeFileSync(join(dir, 'm4.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')), rootEvery: 4 }))
    const c4 = await cli('task', 'check', join(dir, 'm4.json'))
    expect(c4.code, c4.stderr).toBe(0); expect(c4.stdout).toMatch(/state roots every 4 steps/)
    // task new's default: a root every 8 steps, the spacing it picks a multiple of 8 (the mlp's: 9 rounded up, its step
    // doing little work per byte of state; 5 with the default cost); 1 when the named spacing is not a multiple of 8
    const d8 = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '1000', '--synthetic-size', '64', '--no-rows-root')
    expect(d8.code, d8.stderr).toBe(0)
    expect(JSON.parse(d8.stdout)).toMatchObject({ rootEvery: 8, checkpointEvery: 16 })
    const d1 = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '1000', '--checkpoint-every', '5', '--synthetic-size', '64', '--no-rows-root')
    expect(d1.code, d1.stderr).toBe(0)
    expect(JSON.parse(d1.stdout).checkpointEvery).toBe(5); expect(JSON.parse(d1.stdout).rootEvery ?? 1).toBe(1)
    const n4 = await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '24', '--checkpoint-every', '6', '--root-every', '4')
    expect(n4.code).not.toBe(0); expect(n4.stderr).toMatch(/--root-every 4 must divide --checkpoint-every 6/)
    expect(JSON.parse(ok.stdout).programHash).toMatch(/^[0-9a-f]{64}$/)
    writeFileSync(join(dir, 'bad.json'), '{"version":1}')
    const bc = await cli('task', 'check', join(dir, 'bad.json'))
    expect(bc.code).not.toBe(0); expect(bc.stderr).toMatch(/runtime must be a string/)
    const t = await cli('train', '--task', join(dir, 'bad.json'), '--out', join(dir, 'x'))
    expect(t.code).not.toBe(0); expect(t.stderr).toMatch(/error: runtime must be a string/)
    const r = await cli('replay', '--proof', join(dir, 'missing'), '--step', '1')
    expect(r.code).not.toBe(0); expect(r.stderr).toMatch(/task file not found/)
  })
})
