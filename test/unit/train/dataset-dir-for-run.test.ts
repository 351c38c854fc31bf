import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { taskProgram } from '../../helpers/program.js'
import type { DatasetRef } from '../../../protocols/program/index.js'
import { datasetDirForRun, fetchedDatasetDir } from '../../../node/train/store.js'

// A dispute's tape and segment re-runs must read the dataset the disputed
// replay read: a custom dataset this node fetched from the swarm, not the
// operator's configured directory (which holds another dataset, and whose
// content hash the engine would refuse: the honest party could not tape).

const root = mkdtempSync(join(tmpdir(), 'ds-dir-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function runWith (name: string, dataset: DatasetRef): string {
  const runDir = join(root, name)
  mkdirSync(runDir, { recursive: true })
  writeFileSync(join(runDir, 'task.json'), JSON.stringify(taskProgram({ dataset }).program))
  return runDir
}

describe('the dataset directory of a dispute job', () => {
  const custom = { kind: 'idx' as const, name: 'custom', sha256: 'ab'.repeat(32), trainSize: 256, testSize: 0, rowSize: 784, classes: 10 }
  const dataDir = join(root, 'data')

  it('is the configured one while this node has not fetched the run\'s dataset', () => {
    expect(datasetDirForRun(runWith('a', custom), dataDir, '/configured')).toBe('/configured')
  })

  it('is the copy fetched from the swarm, named by the dataset\'s hash, once there is one', () => {
    mkdirSync(fetchedDatasetDir(dataDir, custom), { recursive: true })
    expect(fetchedDatasetDir(dataDir, custom)).toBe(join(dataDir, 'datasets', 'ab'.repeat(32)))
    expect(datasetDirForRun(runWith('b', custom), dataDir, '/configured')).toBe(fetchedDatasetDir(dataDir, custom))
    expect(datasetDirForRun(runWith('c', custom), dataDir, undefined)).toBe(fetchedDatasetDir(dataDir, custom))
  })

  it('is not another dataset\'s fetched copy, and a run without a readable program keeps the configured one', () => {
    expect(datasetDirForRun(runWith('d', { ...custom, sha256: 'cd'.repeat(32) }), dataDir, '/configured')).toBe('/configured')
    expect(datasetDirForRun(join(root, 'missing'), dataDir, '/configured')).toBe('/configured')
  })
})
