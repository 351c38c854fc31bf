import type { KeyringPair } from '@polkadot/keyring/types'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import { ChallengerGame, DefenderGame, skeletonLeaves, type DisputeContext } from '../../protocols/dispute/index.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import * as reference from '../../protocols/reference/index.js'
import type { TraceFile } from './trace-file.js'

// The pure players of protocols/dispute, built from what a peer has on disk:
// a trace file (from the trace child), the defender's per-step state roots
// (its proof.json) and the program.

const tensorOf = (f: TraceFile) => (e: number, io: 'in' | 'out', k: number): TensorData => {
  const v = f.values[e]
  const t = v === undefined ? undefined : io === 'in' ? v.inputs[k] : v.outputs[k]
  if (t === undefined) throw new Error(`no tensor ${io} ${k} of entry ${e}`)
  return t
}

export function programBytesOf (program: TaskProgram): Uint8Array {
  const { info: _i, ...bare } = program as TaskProgram & { info?: unknown }
  return new TextEncoder().encode(canonicalJson(bare))
}

export function makeDefender (o: { disputeId: number, ctx: DisputeContext, trace: TraceFile, stateRoots: string[], pair: KeyringPair, lie?: boolean, program?: TaskProgram }): DefenderGame {
  return new DefenderGame({
    disputeId: o.disputeId,
    genesis: o.ctx.genesis,
    taskId: o.ctx.taskId,
    step: o.trace.step,
    entries: o.trace.entries,
    tensor: tensorOf(o.trace),
    account: o.pair.publicKey,
    sign: m => o.pair.sign(m),
    stateRoots: o.stateRoots,
    lie: o.lie,
    program: o.program === undefined ? undefined : programBytesOf(o.program)
  })
}

export function makeChallenger (o: { disputeId: number, ctx: DisputeContext, trace: TraceFile, stateRoots: string[], pair: KeyringPair, defender: Uint8Array, program: TaskProgram }): ChallengerGame {
  const f = o.trace
  const rows = new Map((f.dataset?.rows ?? []).map(r => [r.row, r]))
  const g = new ChallengerGame({
    disputeId: o.disputeId,
    genesis: o.ctx.genesis,
    taskId: o.ctx.taskId,
    step: f.step,
    entries: f.entries,
    tensor: tensorOf(f),
    account: o.pair.publicKey,
    sign: m => o.pair.sign(m),
    defender: o.defender,
    stateRoots: o.stateRoots,
    preStateLeaves: f.preLeaves,
    postRoot: fromHex(f.stateRootAfter),
    program: programBytesOf(o.program),
    skeleton: skeletonLeaves(f.entries),
    dataset: f.dataset == null
      ? undefined
      : {
          xRoot: f.dataset.xRoot,
          yRoot: f.dataset.yRoot,
          row: (name, i) => {
            const r = rows.get(i)
            if (r === undefined) throw new Error(`no proof of dataset row ${i} in the trace file`)
            return name === 'x' ? r.x : r.y
          }
        }
  })
  g.batchRow = r => f.batchRows[r]
  g.operandRefs = (e, flat) => reference.elementOperands(o.program.runtime, reference.opShapeOf(e), flat)
  return g
}
