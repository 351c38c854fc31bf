import { WASM_PSK_RUNTIME, WASM_RUNTIME } from '../../protocols/program/runtime.js'
import { newProgram, type NewProgramOptions, type TaskProgram } from '../../protocols/program/program.js'
import { pskAddonMissing } from './psk-available.js'

// The runtime a new task program pins when none is named. psk1 trains the zoo
// models several times faster than tfjs-wasm (docs/training.md, "Runtimes and
// backends"), but only with its native addon: without it the psk1 kernels run
// in JavaScript (the same bits, far slower), so a machine whose addon did not
// build (or does not load) gets the old runtime, with the reason. The check
// loads the addon only, not tfjs and the kernels' self-test: a self-test
// mismatch (the engine's start log says it) still trains psk1's bits.

export interface RuntimeChoice {
  runtime: string
  /** whether the psk1 addon loads here */
  native: boolean
  /** set when the default fell back to the old runtime: why, for the user */
  warning?: string
}

export function defaultRuntime (): RuntimeChoice {
  const why = pskAddonMissing(WASM_PSK_RUNTIME)
  if (why === undefined) return { runtime: WASM_PSK_RUNTIME, native: true }
  return {
    runtime: WASM_RUNTIME,
    native: false,
    warning: `the psk1 kernels' native addon is not usable here (${why}), so this program pins the old runtime ${WASM_RUNTIME} (training and verifying on it is ~3.5x slower per MLP step than ${WASM_PSK_RUNTIME}, ~1.4x per CNN step); build the addon (npm run build:kernels) or name a runtime with --runtime`
  }
}

/**
 * The runtime a new program pins: the named one, else defaultRuntime(). psk1 named on a machine
 * without its addon is kept (its JavaScript kernels give the same bits, and peers with the addon
 * run it at full speed) with a warning: training or verifying it here would be slow.
 */
export function chooseRuntime (named: string | undefined): RuntimeChoice {
  if (named === undefined) return defaultRuntime()
  const why = pskAddonMissing(named)
  if (why === undefined) return { runtime: named, native: named === WASM_PSK_RUNTIME }
  return { runtime: named, native: false, warning: `this machine has no usable psk1 addon (${why}): it would train or verify this ${WASM_PSK_RUNTIME} program with the JavaScript kernels (the same bits, far slower); peers that verify it need the addon to replay in time (docs/operators-guide.md)` }
}

/**
 * newProgram with task new's runtime rule (the pure newProgram cannot see this machine and keeps
 * the old runtime as its default): the named runtime, else psk1 where its addon works here.
 */
export function newTaskProgram (o: NewProgramOptions): { program: TaskProgram, warning?: string } {
  const c = chooseRuntime(o.runtime)
  return { program: newProgram({ ...o, runtime: c.runtime }), ...(c.warning !== undefined ? { warning: c.warning } : {}) }
}
