#!/usr/bin/env node
import '../polyfill.js'
import { toHex } from '../../protocols/commit/merkle.js'
import { datasetCommitment, initBackend, loadDatasetFor, readProgram, Trainer, traceStep } from '../train/index.js'

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
  const datasetRoot = toHex(datasetCommitment(ds).root)
  process.stdout.write(JSON.stringify({ skeletonRoot: trace.skeletonRoot, datasetRoot }) + '\n')
} catch (err) {
  process.stderr.write(`error: ${(err as Error).message}\n`)
  process.exitCode = 1
}
