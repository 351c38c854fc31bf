import { hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util'
import { blake2AsU8a } from '@polkadot/util-crypto'

// Draws from the chain's block randomness (block-randomness.ts), pure and
// public so any peer can recompute them once the block is out: solver
// selection (whose seed also fixes the solver's private forced-error draw,
// protocols/dispute/forced-error.ts), verifiers' sampled steps.

function u64le (n: bigint | number): Uint8Array {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true)
  return b
}

/** Seed for solver selection of `taskId` at attempt `attempt`, from the randomness of the block that selects. */
export function selectionSeed (randomness: string, taskId: bigint, attempt: number): string {
  return u8aToHex(blake2AsU8a(u8aConcat(new TextEncoder().encode('select'), hexToU8a(randomness), u64le(taskId), u64le(attempt))))
}

function readU128 (seed: string): bigint {
  const b = hexToU8a(seed)
  let x = 0n
  for (let i = 15; i >= 0; i--) x = (x << 8n) | BigInt(b[i])
  return x
}

/** Stake-weighted pick; candidates are sorted by account so the order is canonical. */
export function pickWeighted (seed: string, candidates: Array<{ account: string, stake: bigint }>): string | undefined {
  const c = candidates.filter(x => x.stake > 0n).sort((a, b) => a.account < b.account ? -1 : a.account > b.account ? 1 : 0)
  const total = c.reduce((s, x) => s + x.stake, 0n)
  if (total === 0n) return undefined
  let r = readU128(seed) % total
  for (const x of c) {
    if (r < x.stake) return x.account
    r -= x.stake
  }
  return c[c.length - 1].account
}

/** ppm share of an amount, rounded down. */
export function ppmOf (amount: bigint, ppm: number): bigint {
  return amount * BigInt(ppm) / 1_000_000n
}

/** Seed of the `index`-th verifier drawn in assignment round `round` of `taskId`, from the randomness block's randomness. */
export function assignmentSeed (randomness: string, taskId: bigint, round: number, index: number): string {
  return u8aToHex(blake2AsU8a(u8aConcat(new TextEncoder().encode('assign'), hexToU8a(randomness), u64le(taskId), u64le(round), u64le(index))))
}

/**
 * Draws up to `count` distinct accounts, each stake-weighted among those not
 * drawn yet (without replacement), from one block's randomness: who is drawn
 * is fixed by it, the task and the round, nothing a candidate chooses.
 */
export function drawWeighted (
  randomness: string, taskId: bigint, round: number, count: number, candidates: Array<{ account: string, stake: bigint }>
): string[] {
  const out: string[] = []
  let left = candidates
  for (let i = 0; i < count && left.length > 0; i++) {
    const pick = pickWeighted(assignmentSeed(randomness, taskId, round, i), left)
    if (pick === undefined) break
    out.push(pick)
    left = left.filter(x => x.account !== pick)
  }
  return out
}
