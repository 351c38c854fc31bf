import type { Codec } from '@polkadot/types/types'
import type { Plain } from './codec.js'
import type { SignatureJob } from './signature.js'

// What a transaction is to the runtime on its way in: decoded, checked, or
// rejected with the error a Substrate node would give.

/** A transaction rejected before inclusion; code is the Substrate JSON-RPC error code. */
export class TxInvalid extends Error {
  constructor (readonly code: number, message: string, readonly data?: string) {
    super(message)
    this.name = 'TxInvalid'
  }
}

export const ancient = (): TxInvalid => new TxInvalid(1010, 'Invalid Transaction', 'Transaction has an ancient birth block')
export const badSignature = (): TxInvalid => new TxInvalid(1010, 'Invalid Transaction', 'Transaction has a bad signature')

/** A call with its arguments already converted to plain values (decoded once, at validation). */
export interface PlainCall { pallet: string, name: string, args: Record<string, Plain> }

export type CallCodec = Codec & { callIndex: Uint8Array, args: Codec[] }

export interface ValidTx {
  hash: string
  sender: string
  nonce: number
  bytes: Uint8Array
  call: PlainCall
}

/**
 * A well-formed signed extrinsic whose signature is not checked yet: the host
 * verifies `signature` (inline or in a worker) and then calls `check`.
 */
export interface DecodedTx extends ValidTx {
  signature: SignatureJob
  /** mortal era: the transaction is invalid in blocks after this number */
  death?: number
}

export interface ValidationEnv {
  /** number of the block the transaction would go into */
  number: number
  genesisHash: string
  /** hash of a past block by number (for mortal eras) */
  blockHash: (n: number) => string | undefined
}

export type ApplyOutcome = { included: true, success: boolean } | { included: false, reason: 'future' | 'stale' | 'invalid' }

export const MAX_EXTRINSIC_BYTES = 4 * 1024 * 1024
/** How far ahead of the account nonce the pool accepts transactions. */
export const MAX_FUTURE_NONCES = 1024
