import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureReplayDir } from '../../node/dispute/replay-dir.js'
import type { TaskInfo } from '../../node/chain/client.js'
import type { Peer } from '../../node/peer.js'
import { getShardService } from '../../node/shards/index.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { buildProof } from '../../protocols/pol/proof.js'
import { checkpointDataFile } from '../../protocols/pol/checkpoint.js'
import { startShardPeer } from '../helpers/shard-peer.js'
import { taskProgram } from '../helpers/program.js'
import { tempDir } from '../helpers/procs.js'

// The attack: a challenger about to tape a disputed step fetches the solver's
// run (node/dispute/replay-dir.ts): program, proof, and the checkpoint before
// the step, whose manifest.json names its data file. That name came from the
// solver and was joined to the checkpoint's directory unchecked: a solver
// naming "../../../../x" had the challenger write bytes of its choosing (the
// "checkpoint data" shard) wherever the peer could write: its shell profile,
// its own code. Now a checkpoint's data file is a plain name (no directory,
// no leading dot), else state.bin, for writers and readers alike.

const ESCAPE = '../../../../../escaped.sh'
const PAYLOAD = new TextEncoder().encode('#!/bin/sh\necho owned\n')
let dir: { path: string, cleanup: () => Promise<void> }
let solver: Peer
let challenger: Peer

beforeAll(async () => {
  dir = await tempDir('ps-ck-path-')
  solver = await startShardPeer(join(dir.path, 'solver'), [])
  challenger = await startShardPeer(join(dir.path, 'challenger'), [solver.host.getMultiaddrs()[0].toString()])
}, 60_000)

afterAll(async () => {
  await challenger?.stop()
  await solver?.stop()
  await dir?.cleanup()
})

describe('a checkpoint manifest naming its data file outside its directory', () => {
  it('the challenger writes the data inside the checkpoint\'s directory, nowhere else', async () => {
    const s = getShardService(solver)
    const add = async (bytes: Uint8Array, name: string): Promise<string> => (await s.addBytes(bytes, { name, kind: 'file' })).cid
    const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v))
    const { program } = taskProgram({ steps: 4, checkpointEvery: 2 })
    const roots = Array.from({ length: 5 }, (_, i) => (i + 1).toString(16).padStart(64, '0'))
    const proof = buildProof('00'.repeat(32), 'psk1', roots, [])
    const manifest = { version: 1, programHash: '00'.repeat(32), step: 2, stateRoot: roots[2], dataFile: ESCAPE, dataSha256: '00'.repeat(32), dataBytes: PAYLOAD.length, tensors: [] }
    const index = {
      version: 1, taskId: 0, programHash: '00'.repeat(32), proofRoot: proof.proofRoot,
      program: await add(new TextEncoder().encode(canonicalJson(program)), 'task.json'),
      proof: await add(enc(proof), 'proof.json'),
      // the task's own checkpoint steps (a run listing others is refused before any fetch): 0, 2 and the last
      checkpoints: await Promise.all([0, 2, 4].map(async step => step === 2
        ? { step, manifest: await add(enc(manifest), 'manifest.json'), data: await add(PAYLOAD, 'state.bin') }
        : { step, manifest: await add(enc({ ...manifest, step, stateRoot: roots[step], dataFile: 'state.bin' }), 'manifest.json'), data: await add(PAYLOAD, 'state.bin') }))
    }
    const indexCid = await add(enc(index), 'run-index.json')
    const task = { checkpoints: ['0x' + Buffer.from(`run-index:${indexCid}`).toString('hex')], proofRoot: '0x' + proof.proofRoot, steps: 4, stepCount: 4, checkpointEvery: 2 } as unknown as TaskInfo
    const runDir = join(dir.path, 'challenger', 'disputes', '0')
    // the checkpoint's directory is dir/challenger/disputes/0/checkpoints/step-00000002: five levels up is dir
    const escaped = join(dir.path, 'escaped.sh')
    await ensureReplayDir(getShardService(challenger), 0, task, runDir, 3, solver.peerId.toString()).catch(() => {})
    expect(existsSync(escaped)).toBe(false)
    expect(readdirSync(dir.path).filter(f => f.startsWith('escaped'))).toEqual([])
    // fetched all the same, where the engine reads it
    const ckDir = join(runDir, 'checkpoints', 'step-00000002')
    expect(Buffer.from(readFileSync(join(ckDir, checkpointDataFile(manifest)))).equals(Buffer.from(PAYLOAD))).toBe(true)
  }, 60_000)

  it('a data file is a plain name: no directory, no leading dot', () => {
    expect(checkpointDataFile({ dataFile: 'state.bin' })).toBe('state.bin')
    expect(checkpointDataFile({ dataFile: 'ckpt-10.bin' })).toBe('ckpt-10.bin')
    for (const bad of ['..', '.', '../x', 'a/b', '/etc/passwd', '.hidden', '', 'x'.repeat(200), 7, undefined]) {
      expect(checkpointDataFile({ dataFile: bad })).toBe('state.bin')
    }
  })
})
