import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { initBackend } from '../../node/train/backend.js'
import { loadDatasetFor } from '../../node/train/dataset.js'
import { trainTask } from '../../node/train/run.js'
import type { TaskProgram } from '../../protocols/program/index.js'

// A task's proof root is a function of the task alone: it must not depend on
// how many threads or cores train it. The wasm runtime trains on one thread
// (threads are off, backend.ts); what varies between peers is whether the
// state roots are hashed on a second thread or inline, how many cores the
// process may use, and the process. Three ways of training the same short
// verifiable task: a CLI process on every core (training thread + hashing
// thread), a CLI process pinned to one core (taskset: both threads share it),
// and this process with the hashing inline (one thread).
const run = promisify(execFile)
const MAIN = join(process.cwd(), 'dist/node/cli/main.js')
let dir: string

interface Summary { proofRoot: string, finalStateRoot: string, proofWritten: boolean, hashing?: string }

async function train (pinned: boolean, out: string): Promise<Summary> {
  const args = [MAIN, 'train', '--task', join(dir, 'task.json'), '--out', out, '--no-evaluate', '--json', '--log-level', 'warn']
  const r = pinned ? await run('taskset', ['-c', '0', process.execPath, ...args], { timeout: 60_000 }) : await run(process.execPath, args, { timeout: 60_000 })
  return JSON.parse(r.stdout) as Summary
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-proof-threads-'))
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '16', '--checkpoint-every', '4', '--batch', '32', '--seed', '9', '--synthetic-size', '512', '--out', join(dir, 'task.json')])
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('the proof root does not depend on threads, cores or process', () => {
  it('all cores with a hashing thread, one core, and inline hashing in another process give one proof root', async () => {
    const program = JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')) as TaskProgram
    // the wasm runtime's kernels run on one thread: were that to change, this test must cover thread counts
    expect((await initBackend('wasm')).threads).toBe(1)
    // side by side (the roots must not depend on timing either)
    const [all, one, inline] = await Promise.all([
      train(false, join(dir, 'all')),
      train(true, join(dir, 'one')),
      trainTask({ program, outDir: join(dir, 'inline'), dataset: loadDatasetFor(program.dataset), hashWorker: false, evaluate: false })
    ])

    // the three really differed in threads: the CLI hashes on a worker thread, this process inline
    expect(all.hashing).toBe('worker')
    expect(one.hashing).toBe('worker')
    expect(inline.hashing?.mode).toBe('inline')
    expect(all.proofWritten && one.proofWritten && inline.proofWritten).toBe(true)
    expect(all.proofRoot).toMatch(/^[0-9a-f]{64}$/)
    expect(one.proofRoot).toBe(all.proofRoot)
    expect(inline.proofRoot).toBe(all.proofRoot)
    expect(one.finalStateRoot).toBe(all.finalStateRoot)
    // every per-step root, not just their Merkle root
    const roots = (d: string): string[] => JSON.parse(readFileSync(join(dir, d, 'proof.json'), 'utf8')).stateRoots
    expect(roots('one')).toEqual(roots('all'))
    expect(roots('inline')).toEqual(roots('all'))
    expect(new Set(roots('all')).size).toBe(17)
  })
})
