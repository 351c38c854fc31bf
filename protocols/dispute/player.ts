import { encode } from 'cborg'
import { ZERO_HASH } from '../commit/merkle.js'
import { tensorLeafBytes, tensorLeaves, type TensorData } from '../commit/tensor.js'
import type { TapeEntry } from '../tape/tape.js'
import { moveHash, signMsg, type Body, type DisputeContext, type Msg, type Signed, type SignFn, type TensorAxis, type TensorTree } from './messages.js'
import { chunkTree } from './schemes.js'
import { treeLevels, type Levels } from './tree.js'
import { leafOfStep } from '../pol/segments.js'

// The two players of the bisection, pure: each holds its own op tape of the
// disputed step (and the tensors of every entry) and turns the other side's
// message into its next message, or — for the challenger at the end — into
// the on-chain claim. Transport, signatures' verification, the chain clock
// and timeouts are the caller's (node/dispute). This file holds what both
// players share; defender-game.ts and challenger-game.ts are the players.

export type TensorSource = (entry: number, io: 'in' | 'out', k: number) => TensorData

export interface PlayerInit {
  disputeId: number
  /** the chain's genesis hash and the task id: every signature is bound to them (messages.ts) */
  genesis: Uint8Array
  taskId: number
  /** on-chain step: the transition from state `step` to `step + 1` */
  step: number
  entries: TapeEntry[]
  tensor: TensorSource
  account: Uint8Array
  sign: SignFn
}

export function encodeEntryBytes (e: TapeEntry): Uint8Array { return encode(e) }

/** Signs `body` as the message after `after` (the other side's message it answers; none for the commit). */
export function signAfter (o: Pick<PlayerInit, 'genesis' | 'taskId' | 'disputeId' | 'account' | 'sign'>, body: Body, after: Signed | undefined, afterSeq: number): Signed {
  const link = after === undefined ? { seq: 0, prev: ZERO_HASH } : { seq: afterSeq + 1, prev: moveHash(after) }
  const ctx: DisputeContext = { genesis: o.genesis, taskId: o.taskId, disputeId: o.disputeId }
  return signMsg({ ...body, ...link } as Msg, o.account, o.sign, ctx)
}

/** A tensor's row (column, chunk) tree: its levels, its number of leaves (an empty tensor's is 0, its one level the zero hash) and their bytes. */
export interface TensorTreeOf { levels: Levels, leaves: number, slices: (leaf: number) => Uint8Array }

// A tensor's row (column) tree: its leaves are groups of consecutive rows
// (columns), so bisection ends at a leaf and the slice answer carries the group;
// its chunk tree (the chunked side of a state conversion): the leaves are its chunks.
export class TensorCache {
  private readonly cache = new Map<string, TensorTreeOf>()
  constructor (private readonly tensor: TensorSource) {}
  get (t: TensorTree & { axis: TensorAxis }): TensorTreeOf {
    const key = `${t.e}/${t.io}/${t.k}/${t.axis}`
    let v = this.cache.get(key)
    if (v === undefined) {
      const data = this.tensor(t.e, t.io, t.k)
      const axis = t.axis
      if (axis === 'chunk') {
        const c = chunkTree(data)
        v = { levels: treeLevels(c.leaves), leaves: c.leaves.length, slices: c.chunk }
      } else {
        const leaves = tensorLeaves(data, axis)
        v = { levels: treeLevels(leaves), leaves: leaves.length, slices: (leaf: number) => tensorLeafBytes(data, axis, leaf) }
      }
      this.cache.set(key, v)
    }
    return v
  }
}

/** The leaf that commits the state after `step`: the step itself, or step / m with a root every m steps (a committed state only). */
export function leafIndex (step: number, spacing?: ProofSpacing): number {
  return spacing === undefined ? step : leafOfStep(step, spacing.steps, spacing.rootEvery)
}

/** A proof with a root every m > 1 steps: `stateRoots` are its ⌈steps / m⌉ + 1 leaves. */
export interface ProofSpacing { rootEvery: number, steps: number }
