import { hexToU8a, u8aToHex } from '@polkadot/util'
import { checkBlockRandomness, genesisRandomness } from '../../../protocols/randomness.js'
import type { Context } from './context.js'
import type { Storage } from './state.js'
import { vrfVerify } from './vrf.js'

// Pallet Randomness: the block author's VRF (protocols/randomness.ts), checked
// as each block starts, before any draw of that block reads it. Every draw
// (solver selection, verifier draws and samples, availability and chunk
// samples) reads it, never a block hash, which anyone can predict for a block
// they can simulate.

const R = 'Randomness'

/** Genesis: the author's public key and the randomness block 1's VRF continues. */
export function putGenesisRandomness (store: Storage, author: string): void {
  store.put(R, 'Author', undefined, author)
  store.put(R, 'Current', undefined, u8aToHex(genesisRandomness(hexToU8a(author))))
}

/** The randomness block `number` must sign over (the previous block's, or genesis'). */
export function previousRandomness (store: Storage): string {
  return store.read<string>(R, 'Current')
}

/** Checks the block's VRF (pre-output ‖ proof, 96 bytes) and stores its randomness; a block without a valid one cannot be built. */
export function applyBlockRandomness (ctx: Context, number: number, vrf: string | undefined): void {
  const author = ctx.store.read<string | undefined>(R, 'Author')
  if (author === undefined) throw new Error('this chain has no randomness author in its genesis state (a chain created before block randomness): start a new chain')
  if (vrf === undefined) throw new Error(`block ${number} carries no randomness VRF`)
  const r = checkBlockRandomness(hexToU8a(author), hexToU8a(previousRandomness(ctx.store)), number, hexToU8a(vrf), vrfVerify)
  if (r === undefined) throw new Error(`block ${number}: the randomness VRF is not the author's over the previous randomness`)
  const hex = u8aToHex(r)
  ctx.store.put(R, 'Current', undefined, hex)
  ctx.store.put(R, 'ByBlock', number, hex)
}

/** The randomness of block n (produced); throws if block n has none yet. */
export function blockRandomness (ctx: Context, n: number): string {
  const r = ctx.store.read<string | undefined>(R, 'ByBlock', n)
  if (r === undefined) throw new Error(`block ${n} has no randomness yet`)
  return r
}

/** The randomness of the block being built. */
export function currentRandomness (ctx: Context): string {
  return blockRandomness(ctx, ctx.now)
}
