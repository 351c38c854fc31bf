import { bytesEqual, fromHex } from '../commit/merkle.js'
import { sizeOf, sliceBytes, valuesFromBytes, verifySlice } from '../commit/tensor.js'
import { isBatchLayout, batchElement } from '../data/layout.js'
import { batchIndices } from '../data/order.js'
import type { Claim } from './claim-kinds.js'
import { bitsAt, h32, int, posInSlice, programFacts, sameShape, slice, valueBits } from './claim-fields.js'
import { provenEntry, tapeCommit } from './claim-proofs.js'
import { datasetRootOf } from './dataset.js'
import type { OpShapeLike, StepEnv } from './judge-env.js'
import { nanRule } from './judge-nan.js'
import { bogusPoint, runPosition } from './nan.js'
import { reject, type Ruling } from './ruling.js'

// The claims about one element of a tensor of the defender's tape: an output
// element against the reference semantics run on the entry's own inputs, and
// a batch element against the dataset row the program's data order puts there.

type Verdict = (reason: string) => Ruling

/** Why a claim about an entry past a diverged step's divergence point loses (the tape ends there). */
export function afterEnd (env: StepEnv, index: number): string { return `the run diverged at entry ${env.divergence?.entry ?? -1} of this step: entry ${index} is past its end` }

export function judgeElement (env: StepEnv, c: Extract<Claim, { kind: 'element' }>, defenderLoses: Verdict, challengerLoses: Verdict): Ruling {
  const commit = tapeCommit(env, c.commit)
  const e = provenEntry(env, commit, c, 'element')
  const at = runPosition(env, e.index)
  if (at === 'after') return challengerLoses(afterEnd(env, e.index))
  // a divergence point names a float32 element of this entry's output 0, or none: then the run never reached it
  const bogus = at === 'at' ? bogusPoint(e.outputs[0], env.divergence?.flat ?? 0) : undefined
  if (bogus !== undefined) return defenderLoses(`the divergence point (entry ${e.index}, element ${env.divergence?.flat ?? 0}) ${bogus}`)
  const prog = programFacts(c.program, env.programHash)
  const ref = env.reference
  if (ref === undefined || !ref.supportsElement(prog.runtime, e.kernel)) reject('UnsupportedKernel', `${prog.runtime} ${e.kernel}`)
  const out = e.outputs[0]
  if (out === undefined) reject('InvalidClaim', 'entry has no output')
  const op: OpShapeLike = {
    kernel: e.kernel, attrs: e.attrs, inputs: e.inputs.map(i => ({ shape: i.shape, dtype: i.dtype })),
    output: { shape: out.shape, dtype: out.dtype }, outputIndex: 0
  }
  const flat = int(c.flat, 'flat')
  if (flat >= sizeOf(out.shape)) reject('InvalidClaim', 'flat index outside the output')
  const d = slice(c.slice, 'slice')
  const pos = posInSlice(out.shape, d.axis, d.index, flat)
  if (pos === undefined || d.dtype !== out.dtype || !sameShape(d.shape, out.shape)) reject('InvalidClaim', 'the defender slice does not hold the element')
  if (!verifySlice(fromHex(out.commitment), d)) reject('InvalidProof', 'defender output slice')
  let refs: Array<{ input: number, axis: 'row' | 'col', index: number }>
  try { refs = ref.elementOperands(prog.runtime, op, flat) } catch (x) { reject('InvalidClaim', `operands: ${(x as Error).message}`) }
  if (!Array.isArray(c.operands) || c.operands.length !== refs.length) reject('InvalidClaim', `expected ${refs.length} operands`)
  const proofs = refs.map((r, i) => {
    const p = slice(c.operands[i], `operand ${i}`)
    const inp = e.inputs[r.input]
    if (inp === undefined || p.axis !== r.axis || p.index !== r.index || p.dtype !== inp.dtype || !sameShape(p.shape, inp.shape)) reject('InvalidClaim', `operand ${i} must be ${r.axis} ${r.index} of input ${r.input}`)
    if (!verifySlice(fromHex(inp.commitment), p)) reject('InvalidProof', `operand ${i}`)
    return p
  })
  const got = bitsAt(out.dtype, valuesFromBytes(d.dtype, sliceBytes(d)), pos)
  // NaNs first: no ruling may rest on the reference's treatment of a NaN operand
  const nan = nanRule(e, refs.map(r => r.input), proofs, at, flat, d, got, env.divergence?.flat)
  if (nan !== undefined) return defenderLoses(nan)
  const operands = proofs.map(p => valuesFromBytes(p.dtype, sliceBytes(p)))
  let want: number
  try {
    // bits from the reference: a NaN's sign and payload are part of the value the defender committed
    want = ref.computeElementBits !== undefined
      ? ref.computeElementBits(prog.runtime, op, flat, operands) >>> 0
      : valueBits(out.dtype, ref.computeElement(prog.runtime, op, flat, operands))
  } catch (x) { reject('InvalidClaim', `compute: ${(x as Error).message}`) }
  return want === got ? challengerLoses(`element ${flat} of entry ${e.index} (${e.kernel}) is right`) : defenderLoses(`element ${flat} of entry ${e.index} (${e.kernel}): defender 0x${got.toString(16)}, reference 0x${want.toString(16)}`)
}

export function judgeData (env: StepEnv, c: Extract<Claim, { kind: 'data' }>, defenderLoses: Verdict, challengerLoses: Verdict): Ruling {
  const commit = tapeCommit(env, c.commit)
  const e = provenEntry(env, commit, c, 'data')
  if (runPosition(env, e.index) === 'after') return challengerLoses(afterEnd(env, e.index))
  const prog = programFacts(c.program, env.programHash)
  const k = int(c.k, 'k')
  const inp = e.inputs[k]
  if (inp === undefined || inp.ref.kind !== 'data') reject('InvalidClaim', `input ${k} of entry ${e.index} is not batch data`)
  // the batch holds one dataset row per example, of any shape ([b,784], [b,28,28,1])
  const cols = inp.ref.name === 'x' ? prog.rowSize : prog.classes
  if (!isBatchLayout(inp.shape, prog.batchSize, cols)) reject('UnsupportedKernel', `batch input of shape [${inp.shape.join(',')}] is not [${prog.batchSize}, ...] with ${cols} values per example`)
  const xRoot = h32(c.xRoot, 'xRoot'); const yRoot = h32(c.yRoot, 'yRoot')
  if (!bytesEqual(datasetRootOf(xRoot, yRoot), env.datasetRoot)) reject('InvalidProof', 'xRoot/yRoot do not open dataset_root')
  const flat = int(c.flat, 'flat')
  if (flat >= sizeOf(inp.shape)) reject('InvalidClaim', 'flat index outside the batch')
  const d = slice(c.slice, 'slice')
  const pos = posInSlice(inp.shape, d.axis, d.index, flat)
  if (pos === undefined || d.dtype !== 'float32' || !sameShape(d.shape, inp.shape)) reject('InvalidClaim', 'the defender slice does not hold the element')
  if (!verifySlice(fromHex(inp.commitment), d)) reject('InvalidProof', 'defender batch slice')
  const { r, offset } = batchElement(flat, cols)
  const row = batchIndices(prog.seed, prog.trainSize, prog.batchSize, env.step)[r]
  const ds = slice(c.row, 'row')
  if (ds.axis !== 'row' || ds.index !== row || ds.dtype !== 'float32' || !sameShape(ds.shape, [prog.trainSize, cols])) reject('InvalidClaim', `the dataset slice must be row ${row} of [${prog.trainSize}, ${cols}]`)
  if (!verifySlice(inp.ref.name === 'x' ? xRoot : yRoot, ds)) reject('InvalidProof', 'dataset row')
  const want = bitsAt('float32', valuesFromBytes('float32', sliceBytes(ds)), offset)
  const got = bitsAt('float32', valuesFromBytes('float32', sliceBytes(d)), pos)
  return want === got ? challengerLoses(`batch element ${flat} is dataset row ${row}`) : defenderLoses(`batch element ${flat} of entry ${e.index} is not dataset row ${row}, element ${offset}`)
}
