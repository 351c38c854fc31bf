import { afterAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

// Real data: the zoo `mlp` on Fashion-MNIST (Debian package
// dataset-fashion-mnist) with Adam 1e-3, batch 128, 2 epochs (938 steps),
// trained verifiably by the compiled CLI; the saved model is re-evaluated.
const run = promisify(execFile)
const MAIN = join(process.cwd(), 'dist/node/cli/main.js')
const dir = mkdtempSync(join(tmpdir(), 'ps-fashion-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function cli (...args: string[]): Promise<string> {
  const r = await run(process.execPath, [MAIN, ...args], { timeout: 240_000, maxBuffer: 16 << 20 })
  return r.stdout
}

describe('mlp on Fashion-MNIST', () => {
  it('reaches >= 84% test accuracy with a proof, and evaluate agrees', async () => {
    const task = await cli('task', 'new', '--model', 'mlp', '--dataset', '/usr/share/datasets/fashion-mnist', '--steps', '938', '--batch', '128', '--checkpoint-every', '300', '--optimizer', 'adam', '--lr', '0.001')
    writeFileSync(join(dir, 'task.json'), task)
    const t = JSON.parse(await cli('train', '--task', join(dir, 'task.json'), '--out', join(dir, 'run'), '--json', '--log-level', 'warn'))
    expect(t.completed).toBe(true)
    expect(t.proofRoot).toMatch(/^[0-9a-f]{64}$/)
    expect(t.accuracy).toBeGreaterThanOrEqual(0.84)
    const e = JSON.parse(await cli('evaluate', '--model', join(dir, 'run'), '--json', '--log-level', 'warn'))
    expect(e.testSize).toBe(10000)
    expect(e.accuracy).toBe(t.accuracy)
  }, 300_000)
})
