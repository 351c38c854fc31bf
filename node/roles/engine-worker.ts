#!/usr/bin/env node
import '../polyfill.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootHex, disputeSkeletonRoot } from '../../protocols/dispute/index.js'
import { datasetCommitment, initBackend, loadDatasetFor, oneHot, readProgram, Trainer, traceStep } from '../train/index.js'

// Engine work a peer runs in a child process (TensorFlow.js stays out of the
// long-running peer, which must keep answering the swarm):
//   engine-worker commitments <task.json> [datasetDir]
// prints {"skeletonRoot", "datasetRoot"} — what a submitter commits on chain.

const [cmd, file, datasetDir] = process.argv.slice(2)
try {
  if (cmd !== 'commitments' || file == null) throw new Error('usage: engine-worker commitments <task.json> [datasetDir]')
  const program = readProgram(file)
  const ds = loadDatasetFor(program.dataset, datasetDir)
  await initBackend('auto', program.runtime)
  const trainer = await Trainer.create(program, ds)
  const trace = traceStep(trainer)
  trainer.dispose()
  // what disputes prove against (docs/disputes.md): the skeleton with constants, inputs and labels
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const yRoot = commitTensor({ shape: [ds.trainSize, ds.classes], dtype: 'float32', values: oneHot(ds.trainLabels, ds.classes, all) }).root
  const datasetRoot = datasetRootHex(datasetCommitment(ds).root, yRoot)
  process.stdout.write(JSON.stringify({ skeletonRoot: disputeSkeletonRoot(trace.entries), datasetRoot }) + '\n')
} catch (err) {
  process.stderr.write(`error: ${(err as Error).message}\n`)
  process.exitCode = 1
}
