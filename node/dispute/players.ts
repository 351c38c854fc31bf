import type { KeyringPair } from '@polkadot/keyring/types'
import { fromHex } from '../../protocols/commit/merkle.js'
import type { TensorData } from '../../protocols/commit/tensor.js'
import {
  ChallengerGame, DefenderGame, firstNaNIndex, firstNaNOf, skeletonLeaves,
  type ChallengerInit, type ChallengerSegment, type DisputeContext, type Divergence, type ProofSpacing, type Signed
} from '../../protocols/dispute/index.js'
import { canonicalJson } from '../../protocols/program/canonical-json.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import * as reference from '../../protocols/reference/index.js'
import type { TapeFile } from '../engine/tape-file.js'

// The pure players of protocols/dispute, built from what a peer has on disk:
// a tape file (from the tape child), the defender's per-step state roots
// (its proof.json) and the program.

const tensorOf = (f: TapeFile) => (e: number, io: 'in' | 'out', k: number): TensorData => {
  const v = f.values[e]
  const t = v === undefined ? undefined : io === 'in' ? v.inputs[k] : v.outputs[k]
  if (t === undefined) throw new Error(`no tensor ${io} ${k} of entry ${e}`)
  return t
}

export function programBytesOf (program: TaskProgram): Uint8Array {
  const { info: _i, ...bare } = program as TaskProgram & { info?: unknown }
  return new TextEncoder().encode(canonicalJson(bare))
}

export function makeDefender (
  o: {
    disputeId: number
    ctx: DisputeContext
    tape: TapeFile
    stateRoots: string[]
    pair: KeyringPair
    lie?: boolean
    program?: TaskProgram
    opening?: Signed
    /** a diverged m > 1 proof's last step, disputed alone: `stateRoots` are the proof's leaves */
    spacing?: ProofSpacing
  }
): DefenderGame {
  return new DefenderGame({
    disputeId: o.disputeId,
    genesis: o.ctx.genesis,
    taskId: o.ctx.taskId,
    step: o.tape.step,
    entries: o.tape.entries,
    tensor: tensorOf(o.tape),
    account: o.pair.publicKey,
    sign: m => o.pair.sign(m),
    stateRoots: o.stateRoots,
    lie: o.lie,
    program: o.program === undefined ? undefined : programBytesOf(o.program),
    ...(o.opening !== undefined ? { opening: o.opening } : {}),
    ...(o.spacing !== undefined ? { spacing: o.spacing } : {})
  })
}

/**
 * What our tape of a step says about NaNs (docs/disputes.md, "NaN: a NaN ends the run"): its
 * first NaN op output, a NaN in its pre- or post-state, and whether the defender is wrong by
 * them: any NaN on a step of a complete proof, or on a diverged proof's last step (`divergence`)
 * a first NaN elsewhere than its divergence point.
 */
export function nanFacts (f: TapeFile, divergence?: Divergence): Pick<ChallengerInit, 'firstNan' | 'stateNan' | 'divergence'> & { wrong: boolean } {
  const first = firstNaNOf(f.values.map(v => v.outputs))
  const firstNan = first !== undefined && first.output === 0 ? { entry: first.entry, flat: first.flat } : undefined
  let stateNan: ChallengerInit['stateNan']
  const last = f.entries.length - 1
  for (let i = 0; i < last && stateNan === undefined; i++) {
    f.entries[i].inputs.forEach((inp, k) => {
      if (stateNan !== undefined || inp.ref.kind !== 'state') return
      const flat = firstNaNIndex(inp.dtype, f.values[i].inputs[k].values)
      if (flat >= 0) stateNan = { which: 'pre', t: inp.ref.index, flat }
    })
  }
  if (stateNan === undefined && divergence === undefined) {
    f.values[last]?.inputs.forEach((t, i) => {
      const flat = firstNaNIndex(t.dtype, t.values)
      if (stateNan === undefined && flat >= 0) stateNan = { which: 'post', t: i, flat }
    })
  }
  const atPoint = first !== undefined && divergence !== undefined && first.output === 0 && first.entry === divergence.entry && first.flat === divergence.flat
  const wrong = stateNan !== undefined || (divergence === undefined ? first !== undefined : !atPoint)
  return { firstNan, stateNan, divergence, wrong }
}

export interface ChallengerSetup {
  disputeId: number
  ctx: DisputeContext
  tape: TapeFile
  stateRoots: string[]
  pair: KeyringPair
  defender: Uint8Array
  program: TaskProgram
  nan?: Pick<ChallengerInit, 'firstNan' | 'stateNan' | 'divergence'>
  /** a segment dispute: the defender's signed segment and our opening of this step */
  segment?: ChallengerSegment
  /** a diverged m > 1 proof's last step, disputed alone: `stateRoots` are the proof's leaves */
  spacing?: ProofSpacing
}

export function makeChallenger (o: ChallengerSetup): ChallengerGame {
  const f = o.tape
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
            if (r === undefined) throw new Error(`no proof of dataset row ${i} in the tape file`)
            return name === 'x' ? r.x : r.y
          }
        },
    firstNan: o.nan?.firstNan,
    stateNan: o.nan?.stateNan,
    divergence: o.nan?.divergence,
    ...(o.segment !== undefined ? { segment: o.segment } : {}),
    ...(o.spacing !== undefined ? { spacing: o.spacing } : {})
  })
  g.batchRow = r => f.batchRows[r]
  g.operandRefs = (e, flat) => reference.elementOperands(o.program.runtime, reference.opShapeOf(e), flat)
  return g
}
