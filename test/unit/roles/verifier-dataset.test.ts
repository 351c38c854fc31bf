import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import type { PortsShared } from '../../../node/roles/ports-part.js'
import { VerifierDataset } from '../../../node/roles/verifier-dataset.js'
import type { TaskInfo } from '../../../node/chain/client.js'
import { taskProgram } from '../../helpers/program.js'

// Which dataset a verifier replays with (docs/economics.md "A withheld
// dataset"): files whose content hash is the program's but whose rows are not
// what the task's dataset_root commits are not used (a coalition handing them
// over would win a `data` claim against the verifier's dispute): the verifier
// challenges the dataset instead. The engine is a stand-in that reports the
// root of the directory it loads; the swarm holds no dataset.

const ROOT = '0x' + '0a'.repeat(32)
let dir: string

beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'ps-verifier-dataset-')) })
afterAll(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }) })

function verifierData (local: string, rootOf: (d: string | undefined) => string, warmed: string[]): VerifierDataset {
  const shared = {
    init: { datasetDir: local, book: { get: async () => undefined }, shards: {} },
    peerId: 'me',
    progress: new Map(),
    econ: {},
    log: pino({ level: 'silent' }),
    dataDir: join(dir, 'data'),
    engine: {
      warm: async (_t: string, d: string | undefined, _r: string, o: { datasetRoot?: boolean } = {}) => {
        warmed.push(`${d ?? '-'} ${o.datasetRoot === true}`)
        return { backend: 'wasm', datasetRows: 256, ...(o.datasetRoot === true ? { datasetRoot: rootOf(d) } : {}) }
      }
    }
  }
  return new VerifierDataset(shared as unknown as PortsShared)
}

describe('the dataset a verifier replays with', () => {
  const p = taskProgram({ dataset: { kind: 'idx', name: 'custom', sha256: 'ef'.repeat(32), trainSize: 256, testSize: 0, rowSize: 784, classes: 10 } })
  const task = { datasetRoot: ROOT } as unknown as TaskInfo
  const local = (): string => { const d = join(dir, 'local'); mkdirSync(d, { recursive: true }); writeFileSync(join(d, 'train-images-idx3-ubyte'), ''); return d }

  it('its own directory, when its rows make dataset_root; the root remembered by content hash', async () => {
    const warmed: string[] = []
    const d = local()
    const v = verifierData(d, () => ROOT.slice(2), warmed)
    expect(await v.datasetFor(1, task, p.program, join(dir, 'run'), false)).toEqual({ dir: d })
    expect(JSON.parse(readFileSync(join(dir, 'data', 'datasets', 'roots.json'), 'utf8'))).toEqual({ [p.program.dataset.sha256]: ROOT.slice(2) })
    // the second time the engine is not asked for the root
    expect(await v.datasetFor(1, task, p.program, join(dir, 'run'), false)).toEqual({ dir: d })
    expect(warmed).toEqual([`${d} true`, `${d} false`])
    rmSync(join(dir, 'data'), { recursive: true, force: true })
  })

  it('files whose rows are not dataset_root\'s, and none in the swarm: unavailable (a dataset challenge), never replayed with', async () => {
    const warmed: string[] = []
    const v = verifierData(local(), () => 'ff'.repeat(32), warmed)
    const r = await v.datasetFor(1, task, p.program, join(dir, 'run'), false)
    expect('unavailable' in r && r.unavailable).toMatch(/do not make the task's dataset_root.*names no dataset CID/)
    expect(existsSync(join(dir, 'data', 'datasets', 'roots.json'))).toBe(true)
  })

  it('served rows: no dataset directory at all', async () => {
    const warmed: string[] = []
    const v = verifierData(join(dir, 'none'), () => ROOT.slice(2), warmed)
    expect(await v.datasetFor(1, task, p.program, join(dir, 'run'), true)).toEqual({ served: true })
    expect(warmed).toEqual(['- false'])
  })
})
