import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { uncommittedCheckpoints } from '../../../node/roles/checkpoint-audit.js'
import { fetchEvery } from '../../../node/roles/fetch-every.js'
import { checkpointDir } from '../../../node/train/store.js'
import { stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import type { ProofOfLearning } from '../../../protocols/pol/proof.js'
import { initLayout } from '../../../protocols/program/init.js'
import { taskProgram } from '../../helpers/program.js'
import { tempDir } from '../../helpers/procs.js'

// The verifier finds every checkpoint its sample needs that it cannot use
// before it decides (docs/economics.md "Selective serving"): the downloads go
// on past a missing one, and when the replay meets a checkpoint that is not
// the committed state the others are checked in full. Before, it stopped at
// the first and challenged that one only.

const { program } = taskProgram({ steps: 10, checkpointEvery: 5 })
const state = (seed: number): TensorData[] => initLayout(program).map((t, k) => {
  const n = t.shape.reduce((a, b) => a * b, 1)
  return { shape: [...t.shape], dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 100 + k * 10 + i)) }
})
const bytesOf = (s: TensorData[]): Uint8Array => Buffer.concat(s.map(t => Buffer.from((t.values as Float32Array).buffer)))
let dir: { path: string, cleanup: () => Promise<void> }
let proof: ProofOfLearning

beforeAll(async () => {
  dir = await tempDir('proofswarm-verifier-ck-')
  const roots = Array.from({ length: 11 }, (_, s) => toHex(stateRoot(state(s), s)))
  proof = { steps: 10, stateRoots: roots } as unknown as ProofOfLearning
  // 0 is the committed state, 5 is another state, 10 is missing
  for (const [step, seed] of [[0, 0], [5, 6]]) {
    mkdirSync(checkpointDir(dir.path, step), { recursive: true })
    writeFileSync(join(checkpointDir(dir.path, step), 'state.bin'), bytesOf(state(seed)))
  }
})
afterAll(async () => { await dir?.cleanup() })

describe('the verifier\'s checkpoints', () => {
  it('fetches every checkpoint past a problem and returns every problem, by step', async () => {
    const tried: number[] = []
    const ok: number[] = []
    const problems = await fetchEvery([{ step: 10 }, { step: 0 }, { step: 5 }, { step: 15 }], 2, async c => {
      tried.push(c.step)
      return c.step % 10 === 0 ? `not obtainable: ${c.step}` : undefined
    }, c => ok.push(c.step))
    expect(tried.sort((a, b) => a - b)).toEqual([0, 5, 10, 15])
    expect(ok.sort((a, b) => a - b)).toEqual([5, 15])
    expect(problems.map(p => p.step)).toEqual([0, 10])
  })

  it('after the replay met a bad checkpoint, the others are checked in full: every one not the committed state is found', () => {
    expect(uncommittedCheckpoints(program, dir.path, proof, [0, 5, 10])).toEqual([5, 10])
    expect(uncommittedCheckpoints(program, dir.path, proof, [0])).toEqual([])
  })
})
