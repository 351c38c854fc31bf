import type { CheckpointRef } from '../../protocols/pol/proof.js'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { CommitScheme } from '../../protocols/commit/scheme.js'
import { firstNaNOf } from '../../protocols/dispute/nan.js'
import type { StateHasher } from './state-hasher.js'
import { readCheckpoint } from './store.js'
import { tapeStep } from './tape-recorder.js'
import type { Trainer } from './trainer.js'

// The end of a diverged run: which op of which step produced its first NaN.

/**
 * Where the run's first NaN is: step `k` is re-run from the checkpoint before
 * it under the tape recorder, and the first op output holding a NaN is the
 * divergence point. State k, the proof's last, is written as a checkpoint
 * (verifiers replay step k from it) unless it is one already; its root is
 * returned (a diverged proof commits state k even when m does not divide k).
 */
export async function locateDivergence (
  trainer: Trainer, hasher: StateHasher, k: number,
  o: { outDir: string, phash: string, names: string[], stateSizes: number[], checkpoints: CheckpointRef[], fake?: boolean, stateCommitment?: CommitScheme }
): Promise<{ step: number, entry: number, flat: number, stateRoot: Uint8Array }> {
  const c = Math.max(...o.checkpoints.filter(x => x.step <= k).map(x => x.step))
  const ck = readCheckpoint(o.outDir, c, { programHash: o.phash }, { stateCommitment: o.stateCommitment })
  trainer.loadState(ck.tensors, c)
  while (trainer.step < k) trainer.runStep()
  let stateRoot: Uint8Array
  const have = o.checkpoints.find(x => x.step === k)
  if (have === undefined) {
    const r = await (
      await hasher.submit({
        step: k,
        tensors: trainer.stateCopies(hasher.buffers(o.stateSizes)),
        checkpoint: { runDir: o.outDir, programHash: o.phash, names: o.names },
        stateCommitment: o.stateCommitment
      })
    ).result
    o.checkpoints.push({ step: k, manifestHash: r.manifestHash as string })
    stateRoot = r.root
  } else stateRoot = fromHex(ck.manifest.stateRoot) // c = k: the checkpoint just read
  const tr = tapeStep(trainer)
  const first = firstNaNOf(tr.values.map(v => v.outputs))
  if (first === undefined && o.fake === true) return { step: k, entry: Math.max(0, tr.entries.findIndex(e => e.kernel === '_FusedMatMul' || e.kernel === 'BatchMatMul')), flat: 0, stateRoot }
  if (first === undefined) throw new Error(`step ${k + 1} produced a NaN in training but not when taped again: the runtime is not deterministic here`)
  // only output 0 has element references: a first NaN elsewhere could not be judged
  if (first.output !== 0) throw new Error(`step ${k + 1}: the first NaN is in output ${first.output} of entry ${first.entry}, which no claim can address`)
  return { step: k, entry: first.entry, flat: first.flat, stateRoot }
}
