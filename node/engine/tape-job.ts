import { writeFileSync } from 'node:fs'
import { pathWith, treeLevels } from '../../protocols/dispute/tree.js'
import { stateLeavesUnder } from '../../protocols/commit/scheme.js'
import { axisLayout, commitTensor, tensorLeafBytes, tensorLeaves, type SliceProof, type TensorData } from '../../protocols/commit/tensor.js'
import { batchIndices } from '../../protocols/data/order.js'
import { inputRows, labelRows, Trainer, tapeStep } from '../train/index.js'
import { openRunAt } from '../train/run.js'
import { FaultInjector, NO_FAULTS } from '../train/fault.js'
import type { TapeJob, TapeSummary } from './protocol.js'
import { encodeTapeFile, type TapeFile } from './tape-file.js'

// The engine's `tape` job (loads TensorFlow.js): re-executes 1-based step
// `step` of a run directory from the nearest checkpoint before it and writes
// the op tape with all tensor values for the dispute players. A defender
// passes the same faults its training had, so its tape is the one its proof
// was built from.

export async function tapeForDispute (j: Omit<TapeJob, 'kind'>): Promise<TapeSummary> {
  const t0 = performance.now()
  const { program, ref, ds, batches, served, ck } = await openRunAt({ proofDir: j.runDir, step: j.step, datasetDir: j.datasetDir }, 'dispute taping')
  const faults = j.faults ?? NO_FAULTS
  const trainer = await Trainer.create(program, ds, batches)
  const injector = faults.ops.length + faults.weights.length > 0 ? new FaultInjector(faults) : undefined
  let file: TapeFile
  try {
    trainer.loadState(ck.tensors, ref.step)
    while (trainer.step < j.step - 1) {
      injector?.before(trainer.step + 1)
      trainer.runStep()
      injector?.after(trainer)
    }
    const before = trainer.stateTensors().map(t => ({ ...t, values: t.values.slice() }))
    injector?.before(j.step)
    const tr = tapeStep(trainer)
    injector?.after(trainer)
    const chainStep = j.step - 1
    const batchRows = [...batchIndices(program.seed, ds.trainSize, program.batchSize, chainStep)]
    file = {
      step: chainStep, entries: tr.entries, values: tr.values, stateRootBefore: tr.stateRootBefore,
      stateRootAfter: tr.stateRootAfter, preLeaves: stateLeavesUnder(trainer.commitScheme, before, chainStep), batchRows
    }
    if (j.datasetProofs === true && served !== undefined) {
      // replayed from the rows served on chain: each row's leaf and path as the serve carried them
      const p = served.proofs()
      const proofOf = (r: number): { x: SliceProof, y: SliceProof } => {
        const got = p.rows.get(r)
        if (got === undefined) throw new Error(`dataset row ${r} of step ${j.step} was not served on chain`)
        return got
      }
      file.dataset = { xRoot: p.xRoot, yRoot: p.yRoot, rows: [...new Set(batchRows)].map(r => ({ row: r, ...proofOf(r) })) }
    } else if (j.datasetProofs === true) {
      const all = new Uint32Array(ds.trainSize).map((_, i) => i)
      const x: TensorData = { shape: [ds.trainSize, ds.rowSize], dtype: 'float32', values: inputRows(ds, all) }
      const y: TensorData = { shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }
      const px = rowProver(x); const py = rowProver(y)
      file.dataset = { xRoot: px.root, yRoot: py.root, rows: [...new Set(batchRows)].map(r => ({ row: r, x: px.prove(r), y: py.prove(r) })) }
    }
  } finally {
    injector?.dispose()
    trainer.dispose()
  }
  const bytes = encodeTapeFile(file)
  writeFileSync(j.out, bytes)
  return {
    step: j.step, entries: file.entries.length, bytes: bytes.length, fromCheckpoint: ref.step,
    stateRootAfter: file.stateRootAfter, seconds: (performance.now() - t0) / 1000
  }
}

/** Row proofs of one big tensor with its trees built once (proveSlice rebuilds them per call). */
function rowProver (t: TensorData): { root: Uint8Array, prove: (row: number) => SliceProof } {
  const c = commitTensor(t)
  const layout = axisLayout(t.dtype, t.shape, 'row')
  const levels = treeLevels(tensorLeaves(t, 'row'))
  const none = new Map<string, Uint8Array>()
  return {
    root: c.root,
    prove: row => {
      const leaf = Math.floor(row / layout.group)
      return { dtype: t.dtype, shape: [...t.shape], axis: 'row', index: row, bytes: tensorLeafBytes(t, 'row', leaf), siblings: pathWith(levels, none, leaf), otherRoot: c.colRoot }
    }
  }
}
