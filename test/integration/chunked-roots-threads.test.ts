import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { loadDatasetFor } from '../../node/train/dataset.js'
import { trainTask } from '../../node/train/run.js'
import { checkpointDir } from '../../node/train/store.js'
import { chunkedStateRoot, commitChunked, toHex, valuesFromBytes } from '../../protocols/commit/index.js'
import type { CheckpointManifest } from '../../protocols/pol/checkpoint.js'
import { WASM_PSK_RUNTIME, type TaskProgram } from '../../protocols/program/index.js'

// A chunked program's proof (docs/training.md "Chunked roots: design", step 5)
// is a function of the task alone, as a row + column one is
// (proof-root-threads.test.ts): a CLI process on every core (the hashing
// thread computes the chunked roots and writes the checkpoints), a CLI process
// pinned to one core (inline) and this process inline give one proof, and
// every committed root is chunkedStateRoot of the checkpoint's bytes.
const run = promisify(execFile)
const MAIN = join(process.cwd(), 'dist/node/cli/main.js')
let dir: string

interface Summary { proofRoot: string, finalStateRoot: string, proofWritten: boolean, hashing?: string }

async function train (pinned: boolean, out: string): Promise<Summary> {
  const args = [MAIN, 'train', '--task', join(dir, 'task.json'), '--out', out, '--no-evaluate', '--json', '--log-level', 'warn']
  const r = pinned ? await run('taskset', ['-c', '0', process.execPath, ...args], { timeout: 90_000 }) : await run(process.execPath, args, { timeout: 90_000 })
  return JSON.parse(r.stdout) as Summary
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: run npm run build`)
  dir = mkdtempSync(join(tmpdir(), 'ps-chunked-threads-'))
  // --local: a chunked program is admissible on chain only where the chain judges it
  await run(process.execPath, [MAIN, 'task', 'new', '--model', 'mlp', '--dataset', 'synthetic', '--steps', '16', '--checkpoint-every', '8', '--root-every', '4',
    '--batch', '32', '--seed', '9', '--synthetic-size', '512', '--runtime', WASM_PSK_RUNTIME, '--state-commitment', 'chunked', '--local', '--out', join(dir, 'task.json')])
})
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

describe('chunked state roots do not depend on threads, cores or process', () => {
  it('all cores with a hashing thread, one core, and inline in another process give one chunked proof; its roots are the checkpoints\' chunked roots', async () => {
    const program = JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')) as TaskProgram
    expect(program.stateCommitment).toBe('chunked')
    const [all, one, inline] = await Promise.all([
      train(false, join(dir, 'all')),
      train(true, join(dir, 'one')),
      trainTask({ program, outDir: join(dir, 'inline'), dataset: loadDatasetFor(program.dataset), hashWorker: false, evaluate: false })
    ])
    expect(all.hashing).toBe(availableParallelism() > 1 ? 'worker' : 'inline')
    expect(one.hashing).toBe('inline')
    expect(inline.hashing?.mode).toBe('inline')
    expect(all.proofWritten && one.proofWritten && inline.proofWritten).toBe(true)
    expect(one.proofRoot).toBe(all.proofRoot)
    expect(inline.proofRoot).toBe(all.proofRoot)
    for (const d of ['one', 'inline']) expect(readFileSync(join(dir, d, 'proof.json'), 'utf8')).toBe(readFileSync(join(dir, 'all', 'proof.json'), 'utf8'))
    const proof = JSON.parse(readFileSync(join(dir, 'all', 'proof.json'), 'utf8')) as { stateRoots: string[] }
    // the checkpoints of each run (0, 8, 16: leaves 0, 2, 4), recomputed from their bytes by protocols/commit
    for (const d of ['all', 'one', 'inline']) {
      for (const step of [0, 8, 16]) {
        const c = checkpointDir(join(dir, d), step)
        const m = JSON.parse(readFileSync(join(c, 'manifest.json'), 'utf8')) as CheckpointManifest
        const data = new Uint8Array(readFileSync(join(c, 'state.bin')))
        const tensors = m.tensors.map(e => ({
          shape: e.shape, dtype: e.dtype, values: valuesFromBytes(e.dtype, data.slice(e.offset, e.offset + e.byteLength))
        }))
        expect(m.stateCommitment).toBe('chunked')
        expect(m.tensors.map(e => e.root)).toEqual(tensors.map(t => toHex(commitChunked(t).root)))
        expect(toHex(chunkedStateRoot(tensors, step))).toBe(proof.stateRoots[step / 4])
      }
    }
    // a replay in another process compares chunked roots
    const rp = await run(process.execPath, [MAIN, 'replay', '--proof', join(dir, 'one'), '--steps', '6,16', '--json', '--log-level', 'warn'], { timeout: 90_000 })
    const replayed = JSON.parse(rp.stdout).results as Array<{ step: number, match: boolean }>
    expect(replayed.map(r => [r.step, r.match])).toEqual([[8, true], [16, true]])
  }, 240_000)
})
