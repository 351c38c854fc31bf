import type { ClaimKind } from './claim-kinds.js'

// What judging a claim ends in: a ruling, or the claim rejected (the chain
// refuses the extrinsic and the dispute goes on).

/** `step`: the transition the ruling is about (in a segment dispute, the one inside the segment). */
export interface Ruling { winner: 'challenger' | 'defender', kind: ClaimKind, reason: string, step?: number }

export type RejectReason = 'InvalidClaim' | 'InvalidProof' | 'UnsupportedKernel'
export class ClaimRejected extends Error {
  constructor (readonly reason: RejectReason, detail: string) { super(`${reason}: ${detail}`); this.name = 'ClaimRejected' }
}
export function reject (reason: RejectReason, detail: string): never { throw new ClaimRejected(reason, detail) }
