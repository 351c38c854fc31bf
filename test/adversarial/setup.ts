import { u8aToHex } from '@polkadot/util'
import { expect } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { DisputeInfo } from '../../devnet/chain/runtime/disputes.js'
import { decodeMsg, encodeClaim, firstNaNOf, verifySigned, type Claim, type Divergence, type Msg, type Signed } from '../../protocols/dispute/index.js'
import { newProgram, type TaskProgram } from '../../protocols/program/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset, type Dataset } from '../../node/train/dataset.js'
import type { Harness } from '../unit/chain/harness.js'
import { gamesFor, hexOf, honest, honestRun, pair, taskOnChain, verify, type Games, type Run, type Side } from '../unit/dispute/fixture.js'

// Attacks on the dispute game, played against the real runtime (the pure
// chain of test/unit/chain/harness.ts) with real op tapes of an MLP step.
// Bob is the task's solver (the defender), Dave a verifier (the challenger).

export { hexOf }
export const BOND = 100n * UNIT

/** A 5-step MLP task and the op tape of its step 2 (on-chain numbering); `checkpointEvery` 4 makes the segment tests' run. */
export async function mlpRun (checkpointEvery = 5): Promise<Run> {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  return await honestRun(newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery }), ds, 2)
}

/** A chain where Bob committed `defender`'s proof and Dave opened dispute 0 at the run's step; the players of both. */
export async function opened (run: Run, defender: Side, o: { genesis?: string, challenger?: Side } = {}): Promise<{ h: Harness, g: Games }> {
  const h = await taskOnChain(run, defender, { genesis: o.genesis })
  const r = h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step })
  if (r.error !== undefined) throw new Error(r.error)
  return { h, g: gamesFor(h, run, defender, o.challenger ?? honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step }) }
}

export const tx = (h: Harness, who: string, method: string, args: Record<string, unknown> = {}): string | undefined =>
  h.run(who, 'Arbitration', method, { disputeId: 0, ...args }).error
export const force = (h: Harness, who: string, theirs?: Signed, mine?: Signed): string | undefined =>
  tx(h, who, 'force_move', { theirs: theirs === undefined ? '0x' : hexOf(theirs), mine: mine === undefined ? '0x' : hexOf(mine) })
export const answer = (h: Harness, who: string, s: Signed): string | undefined => tx(h, who, 'answer_move', { answer: hexOf(s) })
export const dispute = (h: Harness, id = 0): DisputeInfo => h.read<DisputeInfo>('Arbitration', 'Disputes', id)!
/** Free plus reserved balance: what an account owns. */
export const worth = (h: Harness, name: string): bigint => h.free(name) + h.reserved(name)
/** Runs blocks until the next call lands in block `n`. */
export const until = (h: Harness, n: number): void => { h.advance(n - 1 - h.number) }
export const msgOf = (s: Signed): Msg => decodeMsg(s.m)

/** Plays the game off chain to its claim; returns the claim and every message in order. */
export function playOff (g: Games, defenderKey: Uint8Array, challengerKey: Uint8Array, verify: (m: Uint8Array, s: Uint8Array, p: Uint8Array) => boolean): { claim: Claim, msgs: Signed[], by: 'challenger' | 'defender' } {
  const msgs: Signed[] = []
  let d = g.D.commit()
  msgs.push(d)
  for (let round = 0; round < 200; round++) {
    const next = g.C.onMessage(verifySigned(d, defenderKey, verify, g.ctx), d)
    if ('claim' in next) return { claim: next.claim, msgs, by: 'challenger' }
    if ('fail' in next) throw new Error(next.fail)
    if ('demand' in next) throw new Error(`the challenger demands ${next.demand}`)
    msgs.push(next.send)
    const r = g.D.respond(verifySigned(next.send, challengerKey, verify, g.ctx), next.send)
    if (r.claim !== undefined) return { claim: r.claim, msgs, by: 'defender' }
    d = r.reply!
    msgs.push(d)
  }
  throw new Error('no claim in 200 rounds')
}

/** Dave's answer to a query as the honest defender of `g` would give it. */
export const honestReply = (g: Games) => (q: Signed): Signed => g.D.respond(verifySigned(q, pair('Dave').publicKey, verify, g.ctx), q).reply!

/**
 * The honest challenger (Dave) played off chain from Bob's message `d`, each of its queries answered by
 * `reply` (a cheater's), until it claims (the claim) or stops playing (undefined); `stop` ends the play at
 * a query the test forces on chain instead.
 */
export function challengerClaim (g: Games, d: Signed, reply: (q: Signed) => Signed, stop: (q: Signed) => boolean = () => false): Claim | undefined {
  for (let round = 0; round < 200; round++) {
    const next = g.C.onMessage(verifySigned(d, pair('Bob').publicKey, verify, g.ctx), d)
    if ('claim' in next) return next.claim
    if (!('send' in next) || stop(next.send)) return undefined
    d = reply(next.send)
  }
  return undefined
}

/** The challenger's claim adjudicated on chain; with none, the dispute runs to its deadline and Bob times it out. */
export function adjudicateOrTimeout (h: Harness, claim: Claim | undefined): void {
  if (claim !== undefined) { expect(tx(h, 'Dave', 'adjudicate', { claim: u8aToHex(encodeClaim(claim)) })).toBeUndefined(); return }
  // no claim: the honest challenger can only wait for the deadline
  until(h, dispute(h).deadline + 1)
  expect(tx(h, 'Bob', 'claim_timeout')).toBeUndefined()
}

/** A 5-step MLP task whose learning rate (1e30; 3e9 diverges at step 2) makes its training produce NaNs: the first step whose tape holds one. */
export async function nanRun (learningRate = 1e30): Promise<{ program: TaskProgram, ds: Dataset, k: number, run: Run, first: Divergence }> {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const program = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', learningRate, batchSize: 4, seed: 11, checkpointEvery: 5 })
  for (let k = 0; k < program.steps; k++) {
    const run = await honestRun(program, ds, k)
    const first = firstNaNOf(run.values.map(v => v.outputs))
    if (first !== undefined) {
      if (first.output !== 0) throw new Error('the first NaN is not in an output 0')
      return { program, ds, k, run, first: { entry: first.entry, flat: first.flat } }
    }
  }
  throw new Error('the run produced no NaN')
}
