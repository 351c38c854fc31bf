import * as tf from '@tensorflow/tfjs'
import type { Trainer } from './trainer.js'

// FAULT INJECTION (tests, devnet, Truebit forced errors) — never active unless
// a fault is passed explicitly (`proofswarm train --fault-op`, `--fault-weight`).
//
//   op fault     <kernel>@<step>: at 1-based step `step`, the first op of
//                kernel `kernel` gets element 0 of its output 0 increased by 1.
//                The corrupted value is what later ops of the step read (the
//                kernel itself returns it), so the run stays self-consistent:
//                every state root, checkpoint and tape follows from it.
//   weight fault <step>: after 1-based step `step`, element 0 of weight 0
//                (state tensor 0) is set to |v| + 1 (no op produced it: the
//                tape stays honest, the state root does not): a cheat after
//                an honest step. (A Truebit forced error changes no state: it
//                marks a committed leaf, protocols/dispute/forced-leaf.ts.)
//                Step 0: the initial state itself (a start other than the
//                program's initialisation; every transition after it is honest).

import { type OpFault, type TrainFaults } from './fault-spec.js'
export { parseOpFault, hasFaults, NO_FAULTS, type OpFault, type TrainFaults } from './fault-spec.js'

interface BackendLike { readSync: (id: object) => ArrayLike<number>, write: (v: unknown, shape: number[], dtype: string) => object }

/** Wraps the faulted kernels of the active backend; `before`/`after` bracket each step. */
export class FaultInjector {
  private armed = new Set<string>()
  private readonly restore: Array<() => void> = []
  /** (kernel, step) pairs actually corrupted, for the log */
  readonly fired: OpFault[] = []
  private step = 0

  constructor (private readonly faults: TrainFaults) {
    const backendName = tf.getBackend()
    for (const kernel of new Set(faults.ops.map(o => o.kernel))) {
      const cfg = tf.getKernel(kernel, backendName)
      if (cfg == null) throw new Error(`fault op: backend ${backendName} has no kernel "${kernel}"`)
      const orig = cfg.kernelFunc
      tf.unregisterKernel(kernel, backendName)
      tf.registerKernel({
        ...cfg,
        kernelFunc: args => {
          const out = orig(args)
          if (!this.armed.has(kernel)) return out
          this.armed.delete(kernel) // only the first op of that kernel in the step
          this.fired.push({ kernel, step: this.step })
          const outs = Array.isArray(out) ? out : [out]
          const o = outs[0]
          const b = args.backend as unknown as BackendLike
          const v = (b.readSync(o.dataId) as Float32Array).slice()
          if (v.length === 0) return out
          // positive and different: a +1 on a pre-activation that a ReLU then
          // zeroes would leave the state untouched and the fault invisible
          v[0] = Math.abs(v[0]) + 1
          const t: tf.TensorInfo = { dataId: b.write(v, [...o.shape], o.dtype), shape: o.shape, dtype: o.dtype }
          return Array.isArray(out) ? [t, ...outs.slice(1)] : t
        }
      })
      this.restore.push(() => { tf.unregisterKernel(kernel, backendName); tf.registerKernel(cfg) })
    }
  }

  /** Before 1-based step `step` runs. */
  before (step: number): void {
    this.step = step
    this.armed = new Set(this.faults.ops.filter(o => o.step === step).map(o => o.kernel))
  }

  /** Before the initial state is committed: a weight fault at step 0 changes it. */
  initial (trainer: Trainer): void {
    if (trainer.step === 0) this.after(trainer)
  }

  /** After the step ran (the trainer's step counter already advanced). */
  after (trainer: Trainer): void {
    this.armed.clear()
    if (this.faults.weights.includes(trainer.step)) {
      const v = trainer.weights[0].variable
      tf.tidy(() => {
        const vals = (v.dataSync() as Float32Array).slice()
        vals[0] = Math.fround(Math.abs(vals[0]) + 1)
        v.assign(tf.tensor(vals, v.shape, v.dtype))
      })
    }
  }

  dispose (): void { for (const r of this.restore.splice(0)) r() }
}
