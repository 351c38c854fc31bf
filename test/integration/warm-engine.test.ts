import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pino from 'pino'
import { canonicalHash, canonicalJson } from '../../protocols/program/canonical-json.js'

// The verifier's warm engine (node/engine/engine-server.ts behind
// node/engine/warm-engine.ts): a real child process over IPC, replaying a real
// run written by the CLI, reused across requests, restarted after it dies, and
// telling a bad checkpoint (data availability) from a bad step.
const run = promisify(execFile)
const DIST = join(process.cwd(), 'dist')
const MAIN = join(DIST, 'node/cli/main.js')
let dir: string

interface Outcome { results?: Array<{ step: number, match: boolean, firstMismatch?: number }>, unavailable?: { step: number, reason: string } }
interface Engine { warm: (f: string, d?: string, rt?: string) => Promise<{ backend: string }>, replay: (r: string, s: number[], d?: string, rt?: string, layout?: 'manifest' | 'program') => Promise<Outcome>, stop: () => void, pid: number | undefined }
let engine: Engine

async function cli (...args: string[]): Promise<string> {
  const r = await run(process.execPath, [MAIN, ...args, ...(args[0] === 'task' ? [] : ['--log-level', 'warn'])], { timeout: 120_000, maxBuffer: 16 << 20 })
  return r.stdout
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-warm-engine-'))
  // the runtime named (task new's default follows the machine's addon): the replays below name it
  writeFileSync(join(dir, 'task.json'), await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '30', '--checkpoint-every', '5', '--batch', '32', '--seed', '3', '--synthetic-size', '512', '--optimizer', 'adam', '--runtime', 'tfjs-wasm@4.22.0-simd'))
  await cli('train', '--task', join(dir, 'task.json'), '--out', join(dir, 'run'), '--no-evaluate', '--json')
  // the same task with one op of step 12 corrupted: a solver that faked that step
  await cli('train', '--task', join(dir, 'task.json'), '--out', join(dir, 'faked'), '--no-evaluate', '--json', '--fault-op', 'BatchMatMul@12')
  const { WarmEngine } = await import(join(DIST, 'node/engine/warm-engine.js')) as { WarmEngine: new (log: unknown) => Engine }
  engine = new WarmEngine(pino({ level: 'silent' }))
}, 240_000)
afterAll(() => {
  engine?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const ckDir = (runDir: string, step: number): string => join(runDir, 'checkpoints', `step-${String(step).padStart(8, '0')}`)

describe('warm engine', () => {
  it('replays samples of an honest run in one process, request after request', async () => {
    expect((await engine.warm(join(dir, 'run', 'task.json'))).backend).toBe('wasm')
    const pid = engine.pid
    const a = await engine.replay(join(dir, 'run'), [3, 6, 11, 12, 30])
    expect(a.unavailable).toBeUndefined()
    expect(a.results?.map(r => [r.step, r.match, r.firstMismatch])).toEqual([
      [3, true, undefined], [6, true, undefined], [11, true, undefined], [12, true, undefined], [30, true, undefined]
    ])
    const b = await engine.replay(join(dir, 'run'), [1, 20])
    expect(b.results?.every(r => r.match)).toBe(true)
    expect(engine.pid).toBe(pid)
  }, 120_000)

  it('finds a faked step, and vouches for the honest steps after it', async () => {
    const bad = await engine.replay(join(dir, 'faked'), [12])
    expect(bad.results?.[0]).toMatchObject({ step: 12, match: false })
    // a sample later in the same checkpoint interval replays through the faked step and names it
    const through = await engine.replay(join(dir, 'faked'), [14])
    expect(through.results?.[0]).toMatchObject({ step: 14, firstMismatch: 12 })
    // steps after the next checkpoint are computed honestly from the solver's (committed) state: they replay
    const later = await engine.replay(join(dir, 'faked'), [16, 25])
    expect(later.results?.map(r => r.match)).toEqual([true, true])
    // a sample spanning the faked step stops there
    const span = await engine.replay(join(dir, 'faked'), [11, 13])
    expect(span.results?.map(r => r.match)).toEqual([true, false])
  }, 120_000)

  it('a replay of every step (a whistleblower) needs only the first checkpoint', async () => {
    const { checkpointLoads } = await import('../../protocols/verification/sample.js')
    const all = Array.from({ length: 30 }, (_, i) => i + 1)
    expect(checkpointLoads(all, [0, 5, 10, 15, 20, 25, 30])).toEqual([0])
    const only0 = join(dir, 'only0')
    cpSync(join(dir, 'run'), only0, { recursive: true })
    for (const s of [5, 10, 15, 20, 25, 30]) rmSync(ckDir(only0, s), { recursive: true, force: true })
    const out = await engine.replay(only0, all)
    expect(out.results?.length).toBe(30)
    expect(out.results?.every(r => r.match && r.firstMismatch === undefined)).toBe(true)
  }, 120_000)

  it('a checkpoint that is not the committed state is a data-availability problem, not a bad step', async () => {
    // a corrupt file (what `--fault bad-checkpoint` publishes): caught by its data hash
    const corrupt = join(dir, 'corrupt')
    cpSync(join(dir, 'run'), corrupt, { recursive: true })
    const f = join(ckDir(corrupt, 10), 'state.bin')
    const data = readFileSync(f)
    data[100] ^= 1
    writeFileSync(f, data)
    expect((await engine.replay(corrupt, [3, 12])).unavailable).toMatchObject({ step: 10, reason: expect.stringMatching(/hash mismatch/) })

    // a self-consistent checkpoint of the wrong state (data and manifest agree, the
    // proof references that manifest): only the replayed roots reveal it
    const wrong = join(dir, 'wrong')
    cpSync(join(dir, 'run'), wrong, { recursive: true })
    const other = readFileSync(join(ckDir(wrong, 15), 'state.bin'))
    writeFileSync(join(ckDir(wrong, 10), 'state.bin'), other)
    const m = JSON.parse(readFileSync(join(ckDir(wrong, 10), 'manifest.json'), 'utf8'))
    m.dataSha256 = createHash('sha256').update(other).digest('hex')
    writeFileSync(join(ckDir(wrong, 10), 'manifest.json'), canonicalJson(m))
    const proof = JSON.parse(readFileSync(join(wrong, 'proof.json'), 'utf8'))
    proof.checkpoints.find((c: { step: number }) => c.step === 10).manifestHash = canonicalHash(m)
    writeFileSync(join(wrong, 'proof.json'), JSON.stringify(proof))
    const out = await engine.replay(wrong, [12])
    expect(out.unavailable).toMatchObject({ step: 10, reason: expect.stringMatching(/commitment mismatch/) })
    expect(out.results).toBeUndefined()
  }, 120_000)

  it('checkpoints as data files only (what a verifier fetches): laid out by the program, checked by the replayed roots', async () => {
    const dataOnly = (name: string, from: string): string => {
      const d = join(dir, name)
      cpSync(join(dir, from), d, { recursive: true })
      for (const s of [0, 5, 10, 15, 20, 25, 30]) rmSync(join(ckDir(d, s), 'manifest.json'), { force: true })
      return d
    }
    const honest = dataOnly('data-only', 'run')
    const ok = await engine.replay(honest, [3, 6, 11, 12, 30], undefined, undefined, 'program')
    expect(ok.results?.map(r => [r.step, r.match, r.firstMismatch])).toEqual([
      [3, true, undefined], [6, true, undefined], [11, true, undefined], [12, true, undefined], [30, true, undefined]
    ])
    // without manifests the default (manifest) layout cannot load them: the mode is what makes this work
    expect((await engine.replay(honest, [3])).unavailable).toMatchObject({ step: 0 })
    // a faked step is found as with manifests
    const faked = dataOnly('data-only-faked', 'faked')
    expect((await engine.replay(faked, [14], undefined, undefined, 'program')).results?.[0]).toMatchObject({ step: 14, firstMismatch: 12 })
    // a corrupt data file, or another step's state: a data-availability problem, not a bad step
    const corrupt = dataOnly('data-only-corrupt', 'run')
    const f = join(ckDir(corrupt, 10), 'state.bin')
    const data = readFileSync(f)
    data[100] ^= 1
    writeFileSync(f, data)
    const c = await engine.replay(corrupt, [3, 12], undefined, undefined, 'program')
    expect(c.unavailable).toMatchObject({ step: 10, reason: expect.stringMatching(/does not hash to the proof's state root/) })
    expect(c.results).toBeUndefined()
    writeFileSync(f, readFileSync(join(ckDir(corrupt, 15), 'state.bin')))
    expect((await engine.replay(corrupt, [12], undefined, undefined, 'program')).unavailable).toMatchObject({ step: 10 })
    // a truncated one, and a missing one
    writeFileSync(f, data.subarray(0, 1000))
    expect((await engine.replay(corrupt, [12], undefined, undefined, 'program')).unavailable).toMatchObject({ step: 10, reason: expect.stringMatching(/1000 bytes/) })
    rmSync(f)
    expect((await engine.replay(corrupt, [12], undefined, undefined, 'program')).unavailable).toMatchObject({ step: 10, reason: expect.stringMatching(/missing/) })
  }, 120_000)

  it('a job in flight fails clearly when the engine dies; the next request starts a new engine', async () => {
    const pid = engine.pid!
    const job = engine.replay(join(dir, 'run'), Array.from({ length: 30 }, (_, i) => i + 1))
    setTimeout(() => process.kill(pid, 'SIGKILL'), 200)
    await expect(job).rejects.toThrow(/engine exited \(SIGKILL\)/)
    const again = await engine.replay(join(dir, 'run'), [7])
    expect(again.results?.[0].match).toBe(true)
    expect(engine.pid).not.toBe(pid)
  }, 120_000)

  it('a task pinned to another runtime gets a fresh engine (a process runs one tfjs backend)', async () => {
    writeFileSync(join(dir, 'task-cpu.json'), await cli('task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '6', '--checkpoint-every', '3', '--batch', '16', '--seed', '4', '--synthetic-size', '128', '--runtime', 'tfjs-cpu@4.22.0', '--local'))
    await cli('train', '--task', join(dir, 'task-cpu.json'), '--out', join(dir, 'run-cpu'), '--no-evaluate', '--json')
    expect((await engine.replay(join(dir, 'run'), [2], undefined, 'tfjs-wasm@4.22.0-simd')).results?.[0].match).toBe(true)
    const wasmPid = engine.pid
    expect((await engine.replay(join(dir, 'run-cpu'), [2, 5], undefined, 'tfjs-cpu@4.22.0')).results?.map(r => r.match)).toEqual([true, true])
    expect(engine.pid).not.toBe(wasmPid)
    // without the runtime said, the engine running another backend refuses clearly
    await expect(engine.replay(join(dir, 'run'), [2])).rejects.toThrow(/already running|needs the task's runtime/)
  }, 180_000)

  it('bad requests get clear errors and leave the engine serving', async () => {
    const WASM = 'tfjs-wasm@4.22.0-simd'
    await expect(engine.replay(join(dir, 'nope'), [1], undefined, WASM)).rejects.toThrow(/replay of 1 step\(s\) failed: .*not found/)
    await expect(engine.replay(join(dir, 'run'), [31], undefined, WASM)).rejects.toThrow(/step must be in \[1, 30\]/)
    expect((await engine.replay(join(dir, 'run'), [2], undefined, WASM)).results?.[0].match).toBe(true)
  }, 120_000)
})
