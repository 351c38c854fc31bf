import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { readCheckpoint } from '../../../node/train/store.js'

// The worker thread only exists in compiled JS: the hasher from dist/ (npm test builds first).
const { StateHasher } = await import('../../../dist/node/train/state-hasher.js' as string) as typeof import('../../../node/train/state-hasher.js')

const dir = mkdtempSync(join(tmpdir(), 'ps-hasher-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function state (seed: number): TensorData[] {
  const t = (shape: number[], k: number): TensorData => ({ shape, dtype: 'float32', values: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => Math.sin(seed * 7 + k * 13 + i)) })
  return [t([30, 8], 0), t([8], 1), t([8, 3], 2), t([], 3)]
}
const copy = (ts: TensorData[]): TensorData[] => ts.map(t => ({ ...t, shape: [...t.shape], values: t.values.slice() }))

describe('state hasher (worker thread)', () => {
  it('gives protocols/commit roots in order with a bounded queue, reuses shared state slots, writes checkpoints', async () => {
    const h = new StateHasher({ depth: 2, worker: true })
    expect(h.mode).toBe('worker')
    const results: Array<Promise<{ root: Uint8Array, manifestHash?: string }>> = []
    const expected: string[] = []
    const sizes = [240, 8, 24, 1]
    const buffers = new Set<ArrayBufferLike>()
    for (let s = 0; s < 12; s++) {
      const ts = state(s)
      expected.push(toHex(stateRoot(ts, s)))
      const checkpoint = s % 5 === 0 ? { runDir: dir, programHash: 'ab'.repeat(32), names: ['w', 'b', 'w2', 'c'] } : undefined
      // as the training loop does: the state copied into a slot, which is shared with the worker
      const slot = h.buffers(sizes)
      expect(slot[0].buffer).toBeInstanceOf(SharedArrayBuffer)
      buffers.add(slot[0].buffer)
      const tensors = ts.map((t, i) => { slot[i].set(t.values); return { ...t, values: slot[i] } })
      const { result } = await h.submit({ step: s, tensors, checkpoint })
      // nothing is transferred (detached): that would slow every typed-array loop of this thread
      expect(slot.map(v => v.length)).toEqual(sizes)
      results.push(result)
    }
    // at most depth + 2 slots however many steps: the worker's are reused once it replied
    expect(buffers.size).toBeLessThanOrEqual(4)
    const got = await Promise.all(results)
    expect(got.map(r => toHex(r.root))).toEqual(expected)
    // checkpoints at 0, 5, 10: written by the worker, readable and consistent
    for (const s of [0, 5, 10]) {
      expect(got[s].manifestHash).toMatch(/^[0-9a-f]{64}$/)
      const ck = readCheckpoint(dir, s, { manifestHash: got[s].manifestHash })
      expect(ck.manifest.stateRoot).toBe(expected[s])
    }
    expect(got[3].manifestHash).toBeUndefined()
    // tensors outside a slot are copied to the worker, not detached
    const own = copy(state(12))
    const { result } = await h.submit({ step: 12, tensors: own })
    expect(own.map(t => t.values.length)).toEqual(sizes)
    expect(toHex((await result).root)).toBe(toHex(stateRoot(state(12), 12)))
    await h.close()
  })

  it('a failing checkpoint rejects its own job with a clear error; later jobs still work', async () => {
    const h = new StateHasher({ depth: 2, worker: true })
    const blocker = join(dir, 'not-a-dir')
    writeFileSync(blocker, 'x')
    const bad = await h.submit({ step: 1, tensors: copy(state(1)), checkpoint: { runDir: blocker, programHash: 'cd'.repeat(32), names: ['w', 'b', 'w2', 'c'] } })
    await expect(bad.result).rejects.toThrow(/state hashing failed: .*not-a-dir/)
    const ok = await h.submit({ step: 2, tensors: copy(state(2)) })
    expect(toHex((await ok.result).root)).toBe(toHex(stateRoot(state(2), 2)))
    await h.close()
    expect(existsSync(join(blocker, 'checkpoints'))).toBe(false)
  })

  it('hashes on a worker thread by default only where the process may use more than one core', () => {
    // one core: a second thread overlaps nothing and costs more CPU than hashing inline (docs/training.md)
    const url = pathToFileURL(join(process.cwd(), 'dist/node/train/state-hasher.js')).href
    const script = `const { StateHasher } = await import(${JSON.stringify(url)}); const h = new StateHasher(); console.log(h.mode); await h.close()`
    const mode = (pin: boolean): string => execFileSync(pin ? 'taskset' : process.execPath, [...(pin ? ['-c', '0', process.execPath] : []), '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 }).trim()
    expect(mode(true)).toBe('inline')
    expect(mode(false)).toBe(availableParallelism() > 1 ? 'worker' : 'inline')
  })
})
