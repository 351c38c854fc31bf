import { samePreHex } from '../../protocols/dispute/forced-leaf.js'
import type { KeyringPair } from '@polkadot/keyring/types'
import { fromHex } from '../../protocols/commit/merkle.js'
import { SegmentDefender, decodeMsg, signMsg, type DisputeContext, type Signed } from '../../protocols/dispute/index.js'
import { committedStep, segmentCount, segmentLength } from '../../protocols/pol/segments.js'
import { rootEveryOfProof, type ProofOfLearning } from '../../protocols/pol/proof.js'
import type { TaskProgram } from '../../protocols/program/program.js'
import type { EngineFaults } from '../engine/protocol.js'
import { programBytesOf } from './players.js'

// The defender's level above the step game when its proof commits a root
// every m > 1 steps (docs/disputes.md "Segments"): it re-runs the disputed
// segment from its checkpoint with the faults its training had and signs the
// roots inside it. It never signs a list its own committed ends contradict:
// when its re-run does not start at its leaf j or end at its leaf j + 1 it
// cannot defend the segment with any list (every list it could sign has a
// transition its own tape refutes), so it signs nothing and the dispute ends
// on the chain's clock.

/** A re-run of segment j disagrees with the proof this node committed. */
export class SegmentContradicted extends Error {
  constructor (readonly j: number, reason: string) {
    super(`our re-run of segment ${j} contradicts our committed proof (${reason}): we sign no segment we cannot defend`)
    this.name = 'SegmentContradicted'
  }
}

export interface SegmentRunHost {
  /** an engine job: the L + 1 roots of the states after steps first … first + length (hex) */
  segmentRoots: (runDir: string, first: number, length: number, faults: Pick<EngineFaults, 'ops' | 'weights'>) => Promise<string[]>
}

/** The roots inside segment j of our run, re-run once per (task, segment) for every dispute of it. */
export class SegmentRuns {
  private readonly runs = new Map<string, Promise<Uint8Array[]>>()

  constructor (private readonly h: SegmentRunHost) {}

  /** Whether segment j of the task has been re-run or is being re-run. */
  has (taskId: number, j: number): boolean { return this.runs.has(`${taskId}/${j}`) }

  inside (taskId: number, runDir: string, proof: ProofOfLearning, j: number, faults: Pick<EngineFaults, 'ops' | 'weights'>): Promise<Uint8Array[]> {
    const key = `${taskId}/${j}`
    let run = this.runs.get(key)
    if (run === undefined) {
      run = this.rerun(runDir, proof, j, faults)
      this.runs.set(key, run)
      // a contradiction is a fact about our run (kept); any other failure (an engine crash) is retried
      run.catch(err => { if (!(err instanceof SegmentContradicted)) this.runs.delete(key) })
    }
    return run
  }

  private async rerun (runDir: string, proof: ProofOfLearning, j: number, faults: Pick<EngineFaults, 'ops' | 'weights'>): Promise<Uint8Array[]> {
    const m = rootEveryOfProof(proof)
    if (m === 1) throw new Error('not a proof with a root every m > 1 steps')
    if (!Number.isInteger(j) || j < 0 || j >= segmentCount(proof.steps, m)) throw new Error(`segment ${j} is not one of the proof's ${segmentCount(proof.steps, m)}`)
    const first = committedStep(j, proof.steps, m)
    const L = segmentLength(j, proof.steps, m)
    const roots = await this.h.segmentRoots(runDir, first, L, faults)
    if (roots.length !== L + 1) throw new Error(`the segment re-run gave ${roots.length} roots, not ${L + 1}`)
    const leaf = (i: number): string => proof.stateRoots[i].replace(/^0x/, '')
    // a leaf our forced error marked (protocols/dispute/forced-leaf.ts) is the state we reached, as committed
    if (!samePreHex(leaf(j), roots[0])) throw new SegmentContradicted(j, `state ${first} is not leaf ${j}`)
    if (!samePreHex(leaf(j + 1), roots[L])) throw new SegmentContradicted(j, `state ${first + L} is not leaf ${j + 1}`)
    return roots.slice(1, L).map(fromHex)
  }
}

/** The pure segment player of dispute `disputeId` over segment j of our proof. */
export function segmentDefenderOf (
  o: { disputeId: number, ctx: DisputeContext, pair: KeyringPair, j: number, proof: ProofOfLearning, inside: Uint8Array[], program?: TaskProgram }
): SegmentDefender {
  return new SegmentDefender({
    disputeId: o.disputeId,
    genesis: o.ctx.genesis,
    taskId: o.ctx.taskId,
    account: o.pair.publicKey,
    sign: m => o.pair.sign(m),
    j: o.j,
    rootEvery: rootEveryOfProof(o.proof),
    steps: o.proof.steps,
    stateRoots: o.proof.stateRoots,
    inside: o.inside,
    ...(o.program !== undefined ? { program: programBytesOf(o.program) } : {})
  })
}

/** FAULT INJECTION (short-segment): our segment re-signed without its last inner root, a message no challenger can use. */
export function shortSegmentOf (real: Signed, ctx: DisputeContext, pair: KeyringPair): Signed {
  const m = decodeMsg(real.m, true)
  if (m.t !== 'segment') throw new Error('not a segment')
  return signMsg({ ...m, roots: m.roots.slice(0, -1) }, pair.publicKey, x => pair.sign(x), ctx)
}
