import { hexToU8a } from '@polkadot/util'
import type { DisputeContext } from '../../../protocols/dispute/messages.js'
import type { DisputeInfo, DisputeKind, Force, PartyName } from '../../../protocols/pallet-types.js'
import type { Context } from './context.js'
import { verifySignature } from './signature.js'
import { isSegmentDispute } from './segments.js'

// Dispute state of the Arbitration pallet (disputes.ts, dispute-rulings.ts):
// the stored record, its parties and the context every signature is bound to.

const P = 'Arbitration'

export type { DisputeInfo, DisputeKind, Force, PartyName }

export function getDispute (ctx: Context, id: bigint): DisputeInfo {
  const d = ctx.store.get<DisputeInfo>(P, 'Disputes', id)
  if (d === undefined) ctx.fail(P, 'DisputeNotFound')
  return d
}
export const putDispute = (ctx: Context, id: bigint, d: DisputeInfo): void => ctx.store.put(P, 'Disputes', id, d)

export function partyOf (d: DisputeInfo, who: string): PartyName | undefined {
  return who === d.challenger ? 'Challenger' : who === d.defender ? 'Defender' : undefined
}
export const other = (p: PartyName): PartyName => p === 'Challenger' ? 'Defender' : 'Challenger'
export const roleOf = (p: PartyName): 'challenger' | 'defender' => p === 'Challenger' ? 'challenger' : 'defender'

/** The genesis hash every dispute signature is bound to (System.BlockHash(0)). */
export const genesisHash = (ctx: Context): string => ctx.store.read<string>('System', 'BlockHash', 0)

/** sr25519 through the wasm verifier (~0.3 ms), not util-crypto's pure-JS one (~4 ms). */
export const verify = (msg: Uint8Array, sig: Uint8Array, pub: Uint8Array): boolean => verifySignature({ kind: 'Sr25519', message: msg, signature: sig, publicKey: pub })

export function contextOf (ctx: Context, id: bigint, d: DisputeInfo): DisputeContext {
  const c: DisputeContext = { genesis: hexToU8a(genesisHash(ctx)), taskId: Number(d.taskId), disputeId: Number(id) }
  // a segment dispute's messages decode by its own rules (protocols/dispute/messages.ts); a diverged step's are one-step messages
  return isSegmentDispute(ctx, d) ? { ...c, segmented: true } : c
}
