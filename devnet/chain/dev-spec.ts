import { u8aToHex } from '@polkadot/util'
import { cryptoWaitReady } from '@polkadot/util-crypto'
import { TREASURY } from './runtime/balances.js'
import { devPair } from './dev-keys.js'
import type { GenesisConfig } from './runtime/executive.js'
import { REFERENCE_FLOPS } from '../../protocols/scheduling/estimate.js'
import { MAX_ROOT_EVERY } from '../../protocols/pol/segments.js'

// The dev chain spec: well-known sr25519 dev accounts, all funded, and the
// arbitration parameters. 1 UNIT = 10^12 planck (12 decimals).

export const UNIT = 1_000_000_000_000n
export const DEV_ACCOUNTS = ['Alice', 'Bob', 'Charlie', 'Dave', 'Eve', 'Ferdie', ...Array.from({ length: 8 }, (_, i) => `Peer${i + 1}`)]
export const DEV_FUNDS = 1_000_000_000n * UNIT
/**
 * What a second of reference work pays at least on the dev chain, planck: 0.02
 * units, so a 1000-step Fashion-MNIST MLP's training (40 s) is worth 0.8 and a
 * verifier's replay of it (≤ 43 s) 0.86, against the default rewards' 100 and 10.
 */
export const DEV_PRICE_PER_SECOND = UNIT / 50n

export interface DevSpecOptions {
  /** probability of a Truebit forced error per task, parts per million */
  forcedErrorPpm?: number
  /** blocks a party forced in a dispute has to answer on chain (default 20) */
  disputeClock?: number
  /** rent per block of each unit of verifier stake a task holds bound, in billionths (default 10,000: 10 ppm) */
  capacityRentPpb?: number
  /** more accounts to fund: SURIs like //Bench0 */
  extraAccounts?: string[]
  /** block interval in ms (default 1000): converts the reference training speed into FLOP per block */
  blockTime?: number
  /** bytes one training job of a task may need at most (default 4 GiB) */
  maxTaskMemory?: bigint
  /** FLOP a conforming solver trains per block (default REFERENCE_FLOPS x the block time) */
  referenceFlopsPerBlock?: bigint
  /** the largest state-root spacing m a task may name (default MAX_ROOT_EVERY, 64; 1: a root after every step only) */
  maxRootEvery?: number
  /** planck per block of reference work a task's rewards must pay (default DEV_PRICE_PER_SECOND x the block time; 0: no floor) */
  referenceBlockPrice?: bigint
}

export async function devGenesis (o: DevSpecOptions = {}): Promise<GenesisConfig> {
  await cryptoWaitReady()
  const uris = [...DEV_ACCOUNTS.map(n => `//${n}`), ...(o.extraAccounts ?? [])]
  return {
    // the jackpot treasury starts funded so forced errors can pay out from the first task
    balances: [...uris.map((u): [string, bigint] => [u8aToHex(devPair(u).publicKey), DEV_FUNDS]), [TREASURY, 10_000n * UNIT]],
    constants: { blockHashCount: 4096, ss58Prefix: 42, existentialDeposit: 1_000_000n },
    arbitration: {
      minStake: 1000n * UNIT,
      disputeBond: 100n * UNIT,
      disputeClock: o.disputeClock ?? 20,
      slashPpm: 500_000,
      winnerSharePpm: 500_000,
      missedDeadlineSlashPpm: 100_000,
      jackpot: 200n * UNIT,
      forcedErrorPpm: o.forcedErrorPpm ?? 0,
      maxCheckpoints: 4096,
      // 10 ppm of the bound stake per block (docs/economics.md, "Capacity griefing")
      capacityRentPpb: o.capacityRentPpb ?? 10_000,
      maxTaskMemory: o.maxTaskMemory ?? 4n * 1024n ** 3n,
      referenceFlopsPerBlock: o.referenceFlopsPerBlock ?? BigInt(Math.round(REFERENCE_FLOPS * (o.blockTime ?? 1000) / 1000)),
      // any spacing a program may name; an operator bounds the segment re-run with --max-root-every
      maxRootEvery: o.maxRootEvery ?? MAX_ROOT_EVERY,
      // a block's price follows its length, as its reference work does
      referenceBlockPrice: o.referenceBlockPrice ?? DEV_PRICE_PER_SECOND * BigInt(o.blockTime ?? 1000) / 1000n
    }
  }
}
