import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ChainClient, TaskInfo } from '../../../node/chain/client.js'
import { ensureReplayDir } from '../../../node/dispute/replay-dir.js'
import { runFromChain } from '../../../node/roles/verifier-chain-run.js'
import { readCheckpoint } from '../../../node/train/store.js'
import type { ShardService } from '../../../node/shards/index.js'
import { buildServeParts } from '../../../protocols/availability/index.js'
import { merkleRoot, stateRoot, toHex, type TensorData } from '../../../protocols/commit/index.js'
import { manifestHash } from '../../../protocols/pol/checkpoint.js'
import { validateProof } from '../../../protocols/pol/proof.js'
import { initLayout } from '../../../protocols/program/init.js'
import { taskProgram } from '../../helpers/program.js'
import { tempDir } from '../../helpers/procs.js'

// The verifier's decision when the run index or proof.json is withheld
// (node/roles/verifier-chain-run.ts): challenge what a replay from the chain
// needs, all of it, then write a run directory from the chain alone that the
// replay and a dispute's re-execution start from. Before, the node challenged
// the first checkpoint its sample needed and could not replay after the serve.

const P = taskProgram({ steps: 10, checkpointEvery: 5 })
const state = (seed: number): TensorData[] => initLayout(P.program).map((t, k) => {
  const n = t.shape.reduce((a, b) => a * b, 1)
  return { shape: [...t.shape], dtype: 'float32', values: Float32Array.from({ length: n }, (_, i) => Math.cos(seed * 100 + k * 10 + i)) }
})
const ROOTS = Array.from({ length: 11 }, (_, s) => stateRoot(state(s), s))
const task = { programHash: P.programHash, proofRoot: '0x' + toHex(merkleRoot(ROOTS)), stepCount: 10, checkpointEvery: 5, divergence: null, createdAt: 1 } as unknown as TaskInfo
const withheld = async (): Promise<never> => { throw new Error('withheld') }
let dir: { path: string, cleanup: () => Promise<void> }

/** a chain on which `served` checkpoints were served (challenge id = step + 100) */
function chain (served: number[]): ChainClient {
  return {
    servedCheckpoints: async () => new Map(served.map(s => [s, s + 100])),
    servedParts: async (id: number) => buildServeParts(state(id - 100), id - 100, ROOTS),
    taskProgram: async () => P.bytes
  } as unknown as ChainClient
}

beforeAll(async () => { dir = await tempDir('proofswarm-withheld-run-') })
afterAll(async () => { await dir?.cleanup() })

describe('a verifier denied the run index', () => {
  // 1-based steps 3 and 8: replays from checkpoints 0 and 5
  const sampled = [3, 8]

  it('challenges every checkpoint its replay loads at once (and 0), less those already served', async () => {
    expect((await runFromChain(chain([]), 0, task, 1, sampled, dir.path, 'run index withheld'))).toEqual({ unavailable: expect.objectContaining({ step: 0, more: [5] }) })
    expect((await runFromChain(chain([0]), 0, task, 1, sampled, dir.path, 'run index withheld'))).toEqual({ unavailable: expect.objectContaining({ step: 5 }) })
  })

  it('served, writes the run from the chain alone: the program, the committed roots, each served state with a manifest the proof names', async () => {
    const r = await runFromChain(chain([0, 5, 10]), 0, task, 1, sampled, dir.path, 'run index withheld')
    if ('unavailable' in r) throw new Error('still unavailable')
    expect([...r.written]).toEqual([0, 5])
    const proof = validateProof(JSON.parse(readFileSync(join(dir.path, 'proof.json'), 'utf8')))
    expect(proof.stateRoots).toEqual(ROOTS.map(toHex))
    expect(proof.checkpoints.map(c => c.step)).toEqual([0, 5])
    expect(readFileSync(join(dir.path, 'task.json'))).toEqual(Buffer.from(P.bytes))
    for (const c of proof.checkpoints) {
      const ck = readCheckpoint(dir.path, c.step, { programHash: P.programHash.slice(2), manifestHash: c.manifestHash })
      expect(toHex(stateRoot(ck.tensors, c.step))).toBe(toHex(ROOTS[c.step]))
    }
    // a dispute of step 8 starts from the served checkpoint 5, with nothing fetched
    const shards = { fetchBytes: withheld, fetchToFile: withheld } as unknown as ShardService
    expect((await ensureReplayDir(shards, 0, { ...task, checkpoints: [] }, dir.path, 8, 'peer')).proof.proofRoot).toBe(task.proofRoot.slice(2))
  })

  it('refuses a program on chain that is not the task\'s', async () => {
    const other = taskProgram({ steps: 10, checkpointEvery: 5, seed: 9 })
    const c = { ...chain([0, 5]), taskProgram: async () => other.bytes } as unknown as ChainClient
    await expect(runFromChain(c, 0, task, 1, sampled, dir.path, 'x')).rejects.toThrow(/program hash/)
  })

  it('the run index published after all: a manifest of the verifier\'s own is replaced by the solver\'s for a dispute', async () => {
    const r = await runFromChain(chain([0, 5]), 0, task, 1, sampled, dir.path, 'run index withheld')
    if ('unavailable' in r) throw new Error('still unavailable')
    // the solver's manifest of checkpoint 5 names the tensors otherwise: another hash in its proof
    const theirs = { ...JSON.parse(readFileSync(join(dir.path, 'checkpoints', 'step-00000005', 'manifest.json'), 'utf8')), tensors: [] }
    const proof = { ...r.proof, checkpoints: r.proof.checkpoints.map(c => c.step === 5 ? { step: 5, manifestHash: manifestHash(theirs) } : c) }
    writeFileSync(join(dir.path, 'proof.json'), JSON.stringify(proof))
    const cid = (c: string): string => 'b' + c.repeat(58)
    const index = { version: 1, taskId: 0, programHash: P.programHash.slice(2), proofRoot: task.proofRoot.slice(2), program: cid('a'), proof: cid('b'), checkpoints: [0, 5, 10].map(step => ({ step, manifest: cid('c'), data: cid('d') })) }
    const fetched: string[] = []
    const shards = {
      fetchBytes: async () => new TextEncoder().encode(JSON.stringify(index)),
      fetchToFile: async (c: string, path: string) => { fetched.push(c); writeFileSync(path, c === cid('c') ? JSON.stringify(theirs) : 'x') }
    } as unknown as ShardService
    await ensureReplayDir(shards, 0, { ...task, checkpoints: ['0x' + Buffer.from('run-index:' + cid('e')).toString('hex')] }, dir.path, 8, 'peer')
    expect(fetched).toEqual([cid('c'), cid('d')])
  })
})
