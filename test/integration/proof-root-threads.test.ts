import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { initBackend } from '../../node/train/backend.js'
import { loadDatasetFor } from '../../node/train/dataset.js'
import { trainTask } from '../../node/train/run.js'
import { Trainer } from '../../node/train/trainer.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { WASM_PSK_RUNTIME, WASM_RUNTIME, type TaskProgram } from '../../protocols/program/index.js'

// A task's proof root is a function of the task alone: it must not depend on
// how many threads or cores train it. The wasm runtime trains on one thread
// (threads are off, backend.ts); what varies between peers is whether the
// state roots are hashed on a second thread or inline, how many cores the
// process may use, and the process. Three ways of training the same short
// verifiable task: a CLI process on every core (training thread + hashing
// thread), a CLI process pinned to one core (taskset: it hashes inline, the
// default on one core), and this process with the hashing inline by request.
const run = promisify(execFile)
const MAIN = join(process.cwd(), 'dist/node/cli/main.js')
let dir: string

interface Summary {
  proofRoot: string
  finalStateRoot: string
  proofWritten: boolean
  hashing?: string
  runtime?: string
  kernels?: string
  kernelThreads?: number
}

async function train (pinned: boolean, out: string, task = 'task.json', extra: string[] = []): Promise<Summary> {
  const args = [MAIN, 'train', '--task', join(dir, task), '--out', out, '--no-evaluate', '--json', '--log-level', 'warn', ...extra]
  const r = pinned ? await run('taskset', ['-c', '0', process.execPath, ...args], { timeout: 60_000 }) : await run(process.execPath, args, { timeout: 60_000 })
  return JSON.parse(r.stdout) as Summary
}

/** A CLI training of `task` on every core, pinned to one, or with the psk1 runtime's JavaScript kernels instead of the native ones. */
async function trainPsk (task: string, how: 'all' | 'one' | 'js', out: string): Promise<Summary> {
  const args = [MAIN, 'train', '--task', join(dir, task), '--out', out, '--no-evaluate', '--json', '--log-level', 'warn']
  const env = how === 'js' ? { ...process.env, PROOFSWARM_PSK_NATIVE: '0' } : process.env
  const r = how === 'one' ? await run('taskset', ['-c', '0', process.execPath, ...args], { timeout: 60_000, env }) : await run(process.execPath, args, { timeout: 60_000, env })
  return JSON.parse(r.stdout) as Summary
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-proof-threads-'))
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '16', '--checkpoint-every', '4', '--batch', '32', '--seed', '9', '--synthetic-size', '512', '--runtime', WASM_RUNTIME, '--out', join(dir, 'task.json')])
  // the same training with state roots every 4 steps (another program hash, the same states)
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '16', '--checkpoint-every', '8', '--root-every', '4', '--batch', '32', '--seed', '9', '--synthetic-size', '512', '--runtime', WASM_RUNTIME, '--out', join(dir, 'm4.json')])
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--runtime', WASM_PSK_RUNTIME, '--dataset', 'synthetic', '--steps', '8', '--checkpoint-every', '4', '--batch', '64', '--seed', '9', '--synthetic-size', '1024', '--out', join(dir, 'mlp-psk.json')])
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'cnn', '--runtime', WASM_PSK_RUNTIME, '--dataset', 'synthetic', '--steps', '4', '--checkpoint-every', '2', '--batch', '16', '--seed', '9', '--synthetic-size', '256', '--local', '--out', join(dir, 'cnn-psk.json')])
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

    // the three really differed in threads: the CLI hashes on a worker thread where it may use two cores,
    // inline where it may use one (the default there), and this process inline by request
    expect(all.hashing).toBe(availableParallelism() > 1 ? 'worker' : 'inline')
    expect(one.hashing).toBe('inline')
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

  it('state roots every 4 steps: one proof root on all cores, one core, inline and resumed in another process; the roots are every 4th state of the run', async () => {
    const program = JSON.parse(readFileSync(join(dir, 'm4.json'), 'utf8')) as TaskProgram
    expect(program.rootEvery).toBe(4)
    const [all, one, inline] = await Promise.all([
      train(false, join(dir, 'm4-all'), 'm4.json'),
      train(true, join(dir, 'm4-one'), 'm4.json'),
      trainTask({ program, outDir: join(dir, 'm4-inline'), dataset: loadDatasetFor(program.dataset), hashWorker: false, evaluate: false })
    ])
    expect(all.hashing).toBe(availableParallelism() > 1 ? 'worker' : 'inline')
    expect(one.hashing).toBe('inline')
    expect(inline.hashing?.mode).toBe('inline')
    expect(all.proofWritten && one.proofWritten && inline.proofWritten).toBe(true)
    expect(one.proofRoot).toBe(all.proofRoot)
    expect(inline.proofRoot).toBe(all.proofRoot)
    // stopped at step 10 and resumed (from checkpoint 8) in two more processes
    const part = await train(false, join(dir, 'm4-split'), 'm4.json', ['--until', '10'])
    expect(part.proofWritten).toBe(false)
    const resumed = await train(true, join(dir, 'm4-split'), 'm4.json', ['--resume'])
    expect(resumed.proofRoot).toBe(all.proofRoot)
    const proof = (d: string): { stateRoots: string[], rootEvery?: number } => JSON.parse(readFileSync(join(dir, d, 'proof.json'), 'utf8'))
    for (const d of ['m4-one', 'm4-inline', 'm4-split']) expect(readFileSync(join(dir, d, 'proof.json'), 'utf8')).toBe(readFileSync(join(dir, 'm4-all', 'proof.json'), 'utf8'))
    // the committed roots are the trainer's own states 0, 4, 8, 12, 16, computed here step by step
    const t = await Trainer.create(program, loadDatasetFor(program.dataset))
    const every = [toHex(t.stateRoot())]
    for (let i = 0; i < 16; i++) { t.runStep(); every.push(toHex(t.stateRoot())) }
    t.dispose()
    expect(new Set(every).size).toBe(17)
    expect(proof('m4-all').rootEvery).toBe(4)
    expect(proof('m4-all').stateRoots).toEqual([0, 4, 8, 12, 16].map(s => every[s]))
    // the replay CLI at m = 4: a step names its segment, compared at the segment's committed end
    const rp = await run(process.execPath, [MAIN, 'replay', '--proof', join(dir, 'm4-split'), '--steps', '6,16', '--json', '--log-level', 'warn'], { timeout: 60_000 })
    const replayed = JSON.parse(rp.stdout).results as Array<{ segment: number, step: number, match: boolean, fromCheckpoint: number }>
    expect(replayed.map(r => [r.segment, r.step, r.match, r.fromCheckpoint])).toEqual([[1, 8, true, 0], [3, 16, true, 8]])
  })

  // psk1: the MatMul and convolution kernels are proofswarm's own, native with
  // output rows split over 2 threads when the process has 2 cores, else 1, or
  // the JavaScript kernels; each element's sum is the same whatever the split
  it('psk1 runtime: MLP and CNN proof roots are the same with 2 kernel threads, 1, and the JavaScript kernels, in three processes', async () => {
    for (const model of ['mlp', 'cnn']) {
      const [all, one, js] = await Promise.all((['all', 'one', 'js'] as const).map(async how => await trainPsk(`${model}-psk.json`, how, join(dir, `${model}-psk-${how}`))))
      for (const r of [all, one, js]) { expect(r.runtime).toBe(WASM_PSK_RUNTIME); expect(r.proofWritten).toBe(true) }
      // the three really differed: this machine's cores decide the first's threads
      expect(all.kernels).toBe('native'); expect(all.kernelThreads).toBe(Math.min(2, availableParallelism()))
      expect(one.kernels).toBe('native'); expect(one.kernelThreads).toBe(1)
      expect(js.kernels).toBe('js')
      expect(all.proofRoot).toMatch(/^[0-9a-f]{64}$/)
      expect(one.proofRoot).toBe(all.proofRoot)
      expect(js.proofRoot).toBe(all.proofRoot)
      const roots = (d: string): string[] => JSON.parse(readFileSync(join(dir, d, 'proof.json'), 'utf8')).stateRoots
      expect(roots(`${model}-psk-one`)).toEqual(roots(`${model}-psk-all`))
      expect(roots(`${model}-psk-js`)).toEqual(roots(`${model}-psk-all`))
    }
  })
})
