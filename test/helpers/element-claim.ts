import type { KeyringPair } from '@polkadot/keyring/types'
import { commitTensor, proveSlice, sha256, toHex, type TensorData } from '../../protocols/commit/index.js'
import { DefenderGame, encodeEntryBytes, pathWith, treeLevels, type Claim } from '../../protocols/dispute/index.js'
import * as reference from '../../protocols/reference/index.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'

// An element claim about one op, as a challenger builds it at the end of a
// bisection: a 4-entry tape of the same op (all inputs state tensors), the
// defender's commitment over it, and the claim on entry 1's element `flat`
// with the output row and the operands `runtime`'s reference names.

export interface ElementCase {
  runtime: string
  /** the program bytes the claim carries (their hash is the task's) */
  program: Uint8Array
  kernel: string
  names: string[]
  inputs: TensorData[]
  attrs: Record<string, unknown>
  /** what the defender committed as the op's output */
  output: TensorData
  flat: number
  step: number
  stateRoots: string[]
  genesis: Uint8Array
  defender: KeyringPair
}

export function elementClaim (c: ElementCase): Claim {
  const { kernel, attrs, inputs, output, flat } = c
  const entry = (index: number): TapeEntry => ({
    index,
    kernel,
    attrs,
    inputs: inputs.map((t, k) => ({ name: c.names[k], ref: { kind: 'state', index: k }, dtype: t.dtype, shape: t.shape, commitment: toHex(commitTensor(t).root) })),
    outputs: [{ dtype: output.dtype, shape: output.shape, commitment: toHex(commitTensor(output).root) }]
  }) as TapeEntry
  const entries = Array.from({ length: 4 }, (_, i) => entry(i))
  const D = new DefenderGame({
    disputeId: 0,
    genesis: c.genesis,
    taskId: 0,
    step: c.step,
    entries,
    tensor: (_e, io, k) => io === 'out' ? output : inputs[k],
    account: c.defender.publicKey,
    sign: m => c.defender.sign(m),
    stateRoots: c.stateRoots
  })
  const ei = 1
  const op = reference.opShapeOf(entries[ei])
  const cols = output.shape[output.shape.length - 1] ?? 1
  return {
    v: 1,
    kind: 'element',
    commit: D.commit(),
    index: ei,
    entry: encodeEntryBytes(entries[ei]),
    path: pathWith(treeLevels(entries.map(e => sha256(encodeEntryBytes(e)))), new Map(), ei),
    program: c.program,
    flat,
    slice: proveSlice(output, 'row', Math.floor(flat / cols)),
    operands: reference.elementOperands(c.runtime, op, flat).map(o => proveSlice(inputs[o.input], o.axis, o.index))
  }
}

/** The output with element `flat` replaced by `bits`. */
export function substitute (out: TensorData, flat: number, bits: number): TensorData {
  const v = new Uint32Array((out.values as Float32Array).slice().buffer)
  v[flat] = bits
  return { ...out, values: new Float32Array(v.buffer) }
}
