import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import pino from 'pino'
import type { EngineProcess as EngineProcessT, runEngineJob as RunEngineJob } from '../../node/engine/engine.js'
import type { JobEvent } from '../../node/engine/protocol.js'

// The engine protocol between a host and a real engine process (dist/): the
// host takes nothing from the engine's stdout or stderr. Here the engine
// process is loaded with a preload (NODE_OPTIONS --import) that floods both
// with what a stdout/stderr parser would take for a result and for progress
// (a JSON summary with a made-up proof root, "step 999/999" lines): the typed
// result and events must still be the real run's. A second preload corrupts
// the engine's own messages: the host refuses them with a clear error.
const run = promisify(execFile)
const DIST = join(process.cwd(), 'dist')
const MAIN = join(DIST, 'node/cli/main.js')
const FAKE_ROOT = 'f'.repeat(64)
const log = pino({ level: 'silent' })
let dir: string
let task: string
let runEngineJob: typeof RunEngineJob
let EngineProcess: typeof EngineProcessT

const NOISE = `
import { appendFileSync } from 'node:fs'
appendFileSync(process.env.NOISE_MARK, process.pid + '\\n')
const junk = '{"proofRoot":"${FAKE_ROOT}","finalStateRoot":"${FAKE_ROOT}","steps":999,"completed":true}\\nstep 999/999 (100%)  loss 9.9000  1 samples/s  ETA 0s\\n'
process.stdout.write('{ not json ' + junk)
process.stderr.write(junk)
setInterval(() => { process.stdout.write(junk); process.stderr.write(junk) }, 5).unref()
`
// wraps the IPC channel: every progress message leaves with its step as text
const CORRUPT = `
const send = process.send.bind(process)
process.send = (m, ...rest) => send(m?.type === 'progress' ? { ...m, step: String(m.step) } : m, ...rest)
`

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-engine-protocol-'))
  const t = await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '8', '--checkpoint-every', '4', '--batch', '16', '--seed', '5', '--synthetic-size', '128', '--optimizer', 'adam'], { timeout: 60_000 })
  task = join(dir, 'task.json')
  writeFileSync(task, t.stdout)
  writeFileSync(join(dir, 'noise.mjs'), NOISE)
  writeFileSync(join(dir, 'corrupt.mjs'), CORRUPT)
  ;({ runEngineJob, EngineProcess } = await import(join(DIST, 'node/engine/engine.js')) as typeof import('../../node/engine/engine.js'))
}, 60_000)
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

const withPreload = (file: string): NodeJS.ProcessEnv => ({ ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(join(dir, file)).href}`, NOISE_MARK: join(dir, 'noise-pids') })

describe('engine protocol with a real engine process', () => {
  it('a training job\'s result and events are the run\'s own, whatever the engine prints', async () => {
    const events: JobEvent[] = []
    const out = join(dir, 'run')
    const r = await runEngineJob({ kind: 'train', taskFile: task, outDir: out, evaluate: false }, log, 'training', { onEvent: e => events.push(e), env: withPreload('noise.mjs') }).result
    // the noise ran in the engine process
    expect(readFileSync(join(dir, 'noise-pids'), 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(1)
    const proof = JSON.parse(readFileSync(join(out, 'proof.json'), 'utf8'))
    expect(r).toMatchObject({ steps: 8, completed: true, proofWritten: true, proofRoot: proof.proofRoot })
    expect(r.proofRoot).not.toBe(FAKE_ROOT)
    expect(r.checkpoints.map(c => c.step)).toEqual([0, 4, 8])
    const progress = events.flatMap(e => e.type === 'progress' ? [e] : [])
    expect(progress.length).toBeGreaterThan(0)
    expect(progress.every(p => p.steps === 8 && p.step >= 1 && p.step <= 8)).toBe(true)
    expect(progress[progress.length - 1].step).toBe(8)
    expect(events.flatMap(e => e.type === 'checkpoint' ? [e.step] : [])).toEqual([0, 4, 8])
    expect(events.some(e => e.type === 'log' && /backend wasm/.test(e.message))).toBe(true)
  }, 60_000)

  it('a malformed message from the engine fails the job clearly and stops that engine', async () => {
    const job = runEngineJob({ kind: 'train', taskFile: task, outDir: join(dir, 'run-corrupt'), evaluate: false }, log, 'training', { env: withPreload('corrupt.mjs') })
    await expect(job.result).rejects.toThrow(/^training failed: engine protocol: progress message\.step: expected an integer$/)
  }, 60_000)

  it('a job whose host gives up (abort, timeout) fails saying so, and its engine process is gone', async () => {
    const gone = (pid: number | undefined): boolean => { try { process.kill(pid!, 0); return false } catch { return true } }
    const ac = new AbortController()
    const job = runEngineJob({ kind: 'train', taskFile: task, outDir: join(dir, 'run-aborted'), evaluate: false }, log, 'training', { signal: ac.signal, onEvent: () => ac.abort() })
    await expect(job.result).rejects.toThrow(/^training failed: aborted$/)
    expect(gone(job.pid)).toBe(true)
    const slow = runEngineJob({ kind: 'train', taskFile: task, outDir: join(dir, 'run-timeout'), evaluate: false }, log, 'training', { timeoutMs: 50 })
    await expect(slow.result).rejects.toThrow(/^training failed: no result within 50 ms$/)
    expect(gone(slow.pid)).toBe(true)
  }, 60_000)

  it('a request the engine cannot read gets a clear error, and the engine goes on serving', async () => {
    const engine = new EngineProcess(log)
    try {
      const bad = { kind: 'replay', runDir: join(dir, 'run') } as unknown as Parameters<typeof engine.run>[0]
      await expect(engine.run(bad, 'replay')).rejects.toThrow(/^replay failed: engine protocol: replay request\.steps: expected an array$/)
      await expect(engine.run({ kind: 'warm', taskFile: task, extra: 1 } as unknown as Parameters<typeof engine.run>[0], 'warm-up')).rejects.toThrow(/warm request\.extra: unknown field/)
      const pid = engine.pid
      const r = await engine.run({ kind: 'replay', runDir: join(dir, 'run'), steps: [3, 8] }, 'replay')
      expect(r.results?.map(x => [x.step, x.match])).toEqual([[3, true], [8, true]])
      expect(engine.pid).toBe(pid)
      expect(engine.alive).toBe(true)
    } finally {
      engine.kill()
    }
  }, 60_000)
})
