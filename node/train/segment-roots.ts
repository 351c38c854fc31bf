import { toHex } from '../../protocols/commit/merkle.js'
import type { BackendChoice, BackendLog } from './backend.js'
import { fastStateRootUnder } from './fast-commit.js'
import { FaultInjector, type TrainFaults } from './fault.js'
import { openRunAt } from './run-dir.js'
import { Trainer } from './trainer.js'

// Every state root of one segment of a run (docs/disputes.md "Segments"): the
// states after steps first … first + length, re-executed from the nearest
// checkpoint at or before `first`. A segment dispute's defender signs the
// inner ones (with the faults its training had, so they are the roots its
// proof was built from); its challenger compares its own with them.

export interface SegmentRootsOptions {
  proofDir: string
  /** c_j: the segment's first state (0-based step count) */
  first: number
  /** L ≥ 1 transitions */
  length: number
  datasetDir?: string
  backend?: BackendChoice
  log?: BackendLog
  faults?: Pick<TrainFaults, 'ops' | 'weights'>
}

export interface SegmentRoots {
  /** L + 1 hex roots: the states after steps first, first + 1, …, first + length */
  roots: string[]
  fromCheckpoint: number
  seconds: number
}

export async function segmentRoots (o: SegmentRootsOptions): Promise<SegmentRoots> {
  if (!Number.isInteger(o.first) || o.first < 0 || !Number.isInteger(o.length) || o.length < 1) throw new Error(`bad segment: first ${o.first}, length ${o.length}`)
  const t0 = performance.now()
  // the checkpoint before 1-based step first + 1 is the latest at or before state `first`
  const { program, ref, ds, batches, ck } = await openRunAt({ proofDir: o.proofDir, step: o.first + 1, datasetDir: o.datasetDir, backend: o.backend, log: o.log }, 'segment replay')
  if (o.first + o.length > program.steps) throw new Error(`segment ${o.first} + ${o.length} runs past the program's ${program.steps} steps`)
  const faults = o.faults ?? { ops: [], weights: [] }
  const trainer = await Trainer.create(program, ds, batches)
  const injector = faults.ops.length + faults.weights.length > 0 ? new FaultInjector({ ops: faults.ops, weights: faults.weights }) : undefined
  const roots: string[] = []
  try {
    trainer.loadState(ck.tensors, ref.step)
    const step = (): void => {
      injector?.before(trainer.step + 1)
      trainer.runStep()
      injector?.after(trainer)
    }
    const rootNow = (): string => toHex(fastStateRootUnder(trainer.commitScheme, trainer.stateTensors(), trainer.step))
    while (trainer.step < o.first) step()
    roots.push(rootNow())
    while (trainer.step < o.first + o.length) {
      step()
      roots.push(rootNow())
    }
  } finally {
    injector?.dispose()
    trainer.dispose()
  }
  return { roots, fromCheckpoint: ref.step, seconds: (performance.now() - t0) / 1000 }
}
