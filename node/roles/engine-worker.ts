#!/usr/bin/env node
import '../polyfill.js'
import { commitTensor } from '../../protocols/commit/tensor.js'
import { datasetRootHex, disputeSkeletonRoot } from '../../protocols/dispute/index.js'
import { datasetCommitment, initBackend, labelRows, loadDatasetFor, readProgram, Trainer, traceStep } from '../train/index.js'
import { traceForDispute } from '../dispute/trace-worker.js'

// Engine work a peer runs in a child process (TensorFlow.js stays out of the
// long-running peer, which must keep answering the swarm):
//   engine-worker commitments <task.json> [datasetDir]
// prints {"skeletonRoot", "datasetRoot"} — what a submitter commits on chain.
//   engine-worker trace <runDir> <step> <outFile> [--dataset-dir d] [--dataset-proofs]
//                 [--fault-op kernel@step]... [--fault-weight step]...
// re-executes 1-based step <step> from the nearest checkpoint and writes its
// op trace with every tensor value (node/dispute/trace-file.ts); prints a summary.

const argv = process.argv.slice(2)
const [cmd] = argv
try {
  if (cmd === 'commitments') {
    const [, file, datasetDir] = argv
    if (file == null) throw new Error('usage: engine-worker commitments <task.json> [datasetDir]')
    const program = readProgram(file)
    const ds = loadDatasetFor(program.dataset, datasetDir)
    await initBackend('auto', program.runtime)
    const trainer = await Trainer.create(program, ds)
    const trace = traceStep(trainer)
    trainer.dispose()
    // what disputes prove against (docs/disputes.md): the skeleton with constants, inputs and labels
    const all = new Uint32Array(ds.trainSize).map((_, i) => i)
    const yRoot = commitTensor({ shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }).root
    const datasetRoot = datasetRootHex(datasetCommitment(ds).root, yRoot)
    process.stdout.write(JSON.stringify({ skeletonRoot: disputeSkeletonRoot(trace.entries), datasetRoot }) + '\n')
  } else if (cmd === 'trace') {
    const [, runDir, step, out] = argv
    if (runDir == null || step == null || out == null) throw new Error('usage: engine-worker trace <runDir> <step> <outFile> [--dataset-dir d] [--dataset-proofs] [--fault-op k@s]... [--fault-weight s]...')
    const flag = (name: string): string[] => argv.flatMap((a, i) => a === name && argv[i + 1] != null ? [argv[i + 1]] : [])
    const summary = await traceForDispute({
      runDir,
      step: Number(step),
      out,
      datasetDir: flag('--dataset-dir')[0],
      datasetProofs: argv.includes('--dataset-proofs'),
      faultOps: flag('--fault-op'),
      faultWeights: flag('--fault-weight').map(Number)
    })
    process.stdout.write(JSON.stringify(summary) + '\n')
  } else {
    throw new Error('usage: engine-worker commitments|trace ...')
  }
} catch (err) {
  process.stderr.write(`error: ${(err as Error).message}\n`)
  process.exitCode = 1
}
