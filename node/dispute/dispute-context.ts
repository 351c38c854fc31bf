import { hexToU8a } from '@polkadot/util'
import { sr25519Verify } from '@polkadot/util-crypto'
import type { DisputeContext } from '../../protocols/dispute/index.js'
import type { ChainClient } from '../chain/client.js'

// What both sides of a dispute sign and verify with: the signature check
// (false, never a throw, on a malformed key or signature) and the context
// every signature of a dispute is bound to (protocols/dispute/messages.ts).

export const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => { try { return sr25519Verify(m, s, p) } catch { return false } }

/** A dispute's signing context; a task with a root every m > 1 steps has segment disputes (seq 0 is the defender's `segment`). */
export const contextOf = (chain: ChainClient, taskId: number | bigint, disputeId: number, rootEvery = 1): DisputeContext =>
  ({ genesis: hexToU8a(chain.genesisHash), taskId: Number(taskId), disputeId, ...(rootEvery > 1 ? { segmented: true } : {}) })
