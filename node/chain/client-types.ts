import type { KeyringPair } from '@polkadot/keyring/types'
import type { Codec } from '@polkadot/types/types'
import { toPlain, type Plain } from './plain.js'
import type { Logger } from '../log.js'

// What the chain client hands back: events as plain values, the outcome of a
// transaction, and its dispatch error.

export interface ChainEvent {
  section: string
  method: string
  /** named fields as plain values (bigint for u64/u128, 0x-hex for hashes/accounts) */
  data: Record<string, Plain>
  blockHash: string
  blockNumber: number
}

export interface TxOutcome { blockHash: string, events: ChainEvent[] }

/** A dispatch error; `error` is "arbitration.NotRegistered" style for module errors. */
export class ChainError extends Error {
  constructor (readonly error: string, readonly docs: string, readonly outcome?: TxOutcome) {
    super(`${error}${docs !== '' ? `: ${docs}` : ''}`)
    this.name = 'ChainError'
  }
}

export interface ChainClientOptions {
  url: string
  /** where connection losses and reconnect attempts are logged */
  log?: Logger
  /** secret URI (e.g. //Alice, a mnemonic) or a KeyringPair */
  signer: string | KeyringPair
  /** wait for finality instead of inclusion (default false) */
  finalized?: boolean
  timeoutMs?: number
}

export function eventOf (
  e: { event: { section: string, method: string, data: Codec[] & { names?: string[] | null } } }, blockHash: string, blockNumber: number
): ChainEvent {
  const names = e.event.data.names ?? []
  const data: Record<string, Plain> = {}
  e.event.data.forEach((v, i) => { data[names[i] ?? String(i)] = toPlain(v) })
  return { section: e.event.section, method: e.event.method, data, blockHash, blockNumber }
}
