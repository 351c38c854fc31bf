import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { datasetServerFor, submittedTaskFile } from '../../../node/availability/dataset-responder.js'
import { commitTensor } from '../../../protocols/commit/tensor.js'
import { toHex } from '../../../protocols/commit/merkle.js'
import { datasetRootHex } from '../../../protocols/dispute/dataset.js'
import { checkDatasetServePart } from '../../../protocols/availability/index.js'
import { datasetCommitment, encodeIdx, labelRows, loadIdxDataset } from '../../../node/train/dataset.js'
import { programHash } from '../../../protocols/program/program.js'
import { taskProgram } from '../../helpers/program.js'

// The submitter's node answers a dataset challenge from its own dataset
// directory (node/availability/dataset-responder.ts): its rows must make the
// root the engine committed at submission (the `commitments` job), or every
// part it serves would be refused.

const dir = mkdtempSync(join(tmpdir(), 'ps-dataset-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

describe('the submitter\'s dataset server', () => {
  it('serves rows of a custom IDX dataset against the root the engine commits, and finds the program where the submitter wrote it', () => {
    const n = 200
    const images = Uint8Array.from({ length: n * 784 }, (_, i) => (i * 37 + (i >> 7)) & 0xff)
    const labels = Uint8Array.from({ length: n }, (_, i) => (i * 3) % 10)
    const data = join(dir, 'idx')
    mkdirSync(data)
    writeFileSync(join(data, 'train-images-idx3-ubyte'), encodeIdx([n, 28, 28], images))
    writeFileSync(join(data, 'train-labels-idx1-ubyte'), encodeIdx([n], labels))
    writeFileSync(join(data, 't10k-images-idx3-ubyte'), encodeIdx([10, 28, 28], images.subarray(0, 7840)))
    writeFileSync(join(data, 't10k-labels-idx1-ubyte'), encodeIdx([10], labels.subarray(0, 10)))
    const ds = loadIdxDataset(data, 'custom')
    const { program } = taskProgram({
      steps: 10, checkpointEvery: 5, batchSize: 16,
      dataset: { kind: 'idx', name: 'custom', sha256: ds.sha256, trainSize: n, testSize: 10, rowSize: 784, classes: 10 }
    })
    // what the engine's commitments job posts as dataset_root (node/engine/jobs.ts)
    const all = new Uint32Array(n).map((_, i) => i)
    const committed = datasetRootHex(datasetCommitment(ds).root, commitTensor({ shape: [n, 10], dtype: 'float32', values: labelRows(ds, all) }).root)
    const server = datasetServerFor(program, data)
    expect(toHex(server.root)).toBe(committed)
    const steps = [0, 3, 4]
    const [part] = server.parts(steps)
    expect(checkDatasetServePart({ datasetRoot: server.root, facts: server.facts, steps, served: 0 }, part).served).toBe(48)
    expect(submittedTaskFile('/d', '0x' + programHash(program))).toBe(join('/d', 'submit', programHash(program).slice(0, 16), 'task.json'))
  })
})
