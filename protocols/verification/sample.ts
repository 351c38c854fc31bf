import { sha256, fromHex } from '../commit/merkle.js'

// Which parts of a proof a verifier re-executes. The seed is the hash of a
// block produced after the proof was committed, so the solver cannot know it
// when it commits; mixing in the verifier's account gives every verifier a
// different sample, so together they cover more of the run.
//
// A verifier replays whole checkpoint intervals: from checkpoint c it re-runs
// steps c+1..c+k and compares every state root on the way, so one interval
// checks k steps. If a solver fakes a fraction f of its steps at random, one
// interval misses all of them with probability (1-f)^k, and n intervals with
// (1-f)^(k·n) — see intervalsForDetection.

export interface Interval { index: number, fromStep: number, toStep: number }

export function intervalCount (steps: number, checkpointEvery: number): number {
  return Math.ceil(steps / checkpointEvery)
}

export function intervalAt (index: number, steps: number, checkpointEvery: number): Interval {
  const fromStep = index * checkpointEvery
  return { index, fromStep, toStep: Math.min(fromStep + checkpointEvery, steps) }
}

function u32 (b: Uint8Array): number {
  return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0
}

/** `count` distinct intervals chosen uniformly from the seed (hex) and the verifier's account (hex). */
export function sampleIntervals (seedHex: string, accountHex: string, steps: number, checkpointEvery: number, count: number): Interval[] {
  const n = intervalCount(steps, checkpointEvery)
  const want = Math.min(count, n)
  const seed = fromHex(seedHex)
  const acct = fromHex(accountHex)
  const chosen = new Set<number>()
  const ctr = new Uint8Array(4)
  for (let i = 0; chosen.size < want && i < 64 * n + 64; i++) {
    new DataView(ctr.buffer).setUint32(0, i)
    // rejection sampling keeps the choice exactly uniform
    const r = u32(sha256(seed, acct, ctr))
    const limit = Math.floor(2 ** 32 / n) * n
    if (r >= limit) continue
    chosen.add(r % n)
  }
  return [...chosen].sort((a, b) => a - b).map(i => intervalAt(i, steps, checkpointEvery))
}

/** Intervals needed so that faking a fraction f of steps goes unnoticed with probability ≤ miss. */
export function intervalsForDetection (fakedFraction: number, checkpointEvery: number, miss: number): number {
  if (fakedFraction <= 0) return Infinity
  const perInterval = Math.pow(1 - fakedFraction, checkpointEvery)
  return Math.max(1, Math.ceil(Math.log(miss) / Math.log(perInterval)))
}
