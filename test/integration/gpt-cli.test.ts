import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assertBuilt, cliRunner } from '../helpers/procs.js'

// The GPT from the compiled CLI in separate processes: task new with sizes,
// train (verifiable) with its text report, replay with a bitwise re-executed
// tape, evaluate; bad combinations refused with clear errors.
const cli = cliRunner(120_000)
let dir: string

beforeAll(() => {
  assertBuilt()
  dir = mkdtempSync(join(tmpdir(), 'ps-gpt-cli-'))
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('gpt from the CLI', () => {
  it('task new → train → replay --tape → evaluate', async () => {
    const t = await cli('task', 'new', '--model', 'gpt', '--dataset', 'fortunes-min', '--context', '8', '--layers', '1', '--d-model', '16', '--heads', '2', '--mlp', '24', '--steps', '6', '--batch', '4', '--checkpoint-every', '3', '--lr', '0.01')
    expect(t.code, t.stderr).toBe(0)
    const p = JSON.parse(t.stdout)
    expect(p.model).toEqual({ name: 'gpt', gpt: { layers: 1, dModel: 16, heads: 2, mlp: 24, epsilon: 1e-5 } })
    expect(p.dataset).toMatchObject({ kind: 'text', name: 'fortunes-min', rowSize: 8 * 96, text: { context: 8 } })
    expect(p.dataset.rowsRoot).toMatch(/^[0-9a-f]{64}$/)
    const task = join(dir, 'task.json')
    writeFileSync(task, t.stdout)
    const c = await cli('task', 'check', task)
    expect(c.stdout).toMatch(/verifiable on chain/)

    const tr = await cli('train', '--task', task, '--out', join(dir, 'a'), '--json', '--log-level', 'warn')
    expect(tr.code, tr.stderr).toBe(0)
    const j = JSON.parse(tr.stdout)
    expect(j.proofRoot).toMatch(/^[0-9a-f]{64}$/)
    expect(j.text.validationLoss).toBeGreaterThan(0)
    expect(j.text.unigramBaseline).toBeGreaterThan(0)
    expect(j.text.sample.startsWith('The ')).toBe(true)

    const r = await cli('replay', '--proof', join(dir, 'a'), '--step', '5', '--tape', '--json', '--log-level', 'warn')
    expect(r.code, r.stderr).toBe(0)
    const rj = JSON.parse(r.stdout)
    expect(rj).toMatchObject({ step: 5, match: true })
    expect(rj.tape.mismatches).toEqual([])
    expect(rj.tape.reexecutedBitwise).toBe(rj.tape.kernels)
    expect(rj.tape.kernels).toBeGreaterThan(300)

    const e = await cli('evaluate', '--model', join(dir, 'a'))
    expect(e.code, e.stderr).toBe(0)
    expect(e.stdout).toMatch(new RegExp(`validation loss ${j.text.validationLoss.toFixed(4)} nats/token`))
  }, 240_000)

  it('refuses a GPT on image data and an image model on text', async () => {
    const a = await cli('task', 'new', '--model', 'gpt', '--dataset', 'synthetic', '--steps', '5')
    expect(a.code).not.toBe(0)
    expect(a.stderr).toMatch(/--model gpt trains on a text corpus: --dataset fortunes-min/)
    const b = await cli('task', 'new', '--model', 'mlp', '--dataset', 'fortunes-min', '--steps', '5')
    expect(b.code).not.toBe(0)
    expect(b.stderr).toMatch(/is a text corpus: use --model gpt/)
    const c = await cli('task', 'new', '--model', 'gpt', '--dataset', 'fortunes-min', '--steps', '5', '--d-model', '30', '--heads', '4')
    expect(c.code).not.toBe(0)
    expect(c.stderr).toMatch(/multiple of heads/)
  }, 60_000)
})
