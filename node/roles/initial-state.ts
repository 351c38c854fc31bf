import { bytesEqual, fromHex } from '../../protocols/commit/merkle.js'
import { stateRootUnder } from '../../protocols/commit/scheme.js'
import { commitSchemeOf } from '../../protocols/program/commit-scheme.js'
import { dtypeBytes, sizeOf, valuesFromBytes, type TensorData } from '../../protocols/commit/tensor.js'
import { buildInitClaim, encodeInitClaim, firstInitMismatch } from '../../protocols/dispute/init-claim.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import { InitUnsupported, initialState, initLayout } from '../../protocols/program/init.js'
import type { TaskProgram } from '../../protocols/program/program.js'

// The verifier's check of stateRoots[0]: replays only check transitions, so
// the proof's initial state is compared with the program's initialisation,
// computed without the engine (protocols/program/init.ts, milliseconds for a
// 1.2 MB state). On a mismatch the claim is built from the solver's
// checkpoint 0, read with the program's state layout (state.bin is the state
// tensors' canonical bytes one after the other).

export type InitVerdict =
  | { ok: true }
  /** the program's initialisation is not element-addressable: nothing to compare or claim */
  | { ok: true, unsupported: string }
  | { ok: false }

/** Does the proof start from the program's initial state? */
export function initialStateMatches (program: TaskProgram, stateRoot0: string): InitVerdict {
  try {
    // under the program's state commitment (a chunked program's root 0 is chunked)
    const root = stateRootUnder(commitSchemeOf(program), initialState(program), 0)
    return bytesEqual(root, fromHex(stateRoot0)) ? { ok: true } : { ok: false }
  } catch (e) {
    if (e instanceof InitUnsupported) return { ok: true, unsupported: e.message }
    throw e
  }
}

/** The solver's state from checkpoint `step`'s data (step 0 unless given), or why it cannot be the committed one (`root`). */
export function stateFromCheckpoint (program: TaskProgram, data: Uint8Array, root: string, step = 0): TensorData[] | string {
  const layout = initLayout(program)
  const sizes = layout.map(t => sizeOf(t.shape) * dtypeBytes(t.dtype))
  const total = sizes.reduce((a, b) => a + b, 0)
  if (data.length !== total) return `checkpoint ${step} is ${data.length} bytes, the program's state ${total}`
  // a plain Uint8Array view: valuesFromBytes slices, and a Buffer's slice is a view, not a copy
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  let off = 0
  const state = layout.map((t, i) => {
    const values = valuesFromBytes(t.dtype, bytes.subarray(off, off + sizes[i]))
    off += sizes[i]
    return { shape: [...t.shape], dtype: t.dtype, values }
  })
  if (!bytesEqual(stateRootUnder(commitSchemeOf(program), state, step), fromHex(root))) return `checkpoint ${step} does not hash to the proof's state root of step ${step}`
  return state
}

/** The init claim (encodeInitClaim bytes) on the first element where the solver's step-0 state differs from the program's. */
export function initClaimBytes (program: TaskProgram, stateRoots: readonly string[], state: readonly TensorData[]): Uint8Array {
  const at = firstInitMismatch(program, state)
  if (at === undefined) throw new Error('checkpoint 0 is the program\'s initial state: nothing to claim')
  const { info: _i, ...bare } = program as TaskProgram & { info?: unknown }
  const bytes = new TextEncoder().encode(canonicalJson(bare))
  return encodeInitClaim(buildInitClaim({ program: bytes, stateRoots: stateRoots.map(fromHex), state, ...at }))
}
