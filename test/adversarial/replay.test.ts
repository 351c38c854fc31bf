import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ChainClient } from '../../node/chain/client.js'
import { contextOf } from '../../node/dispute/dispute-context.js'
import { encodeClaim, verifySigned } from '../../protocols/dispute/index.js'
import { contextOn, gamesFor, honest, pair, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { signed } from '../helpers/dispute-msgs.js'
import { dispute, force, hexOf, mlpRun, opened, playOff, tx } from './setup.js'

// (c) Replayed signatures. Dispute messages used to be signed over
// "proofswarm/dispute/v1:" ‖ message only, so a claim built from one chain's
// messages could be replayed on another chain (a devnet reset with the same
// keys) or another task. Now every signature covers the genesis hash, the
// task id, the dispute id and the author's role. Each test fails if a
// message or claim made for one context is accepted in another: by the
// chain's judge (adjudicate), by force_move, or by the node's check.

let run: Run
let cheat: Side
const GENESIS_A = '0x' + '11'.repeat(32)
const GENESIS_B = '0x' + '22'.repeat(32)
beforeAll(async () => {
  run = await mlpRun()
  cheat = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
}, 120_000)

const bob = (): Uint8Array => pair('Bob').publicKey
const dave = (): Uint8Array => pair('Dave').publicKey
const adjudicate = (h: Awaited<ReturnType<typeof opened>>['h'], who: string, claim: Parameters<typeof encodeClaim>[0], disputeId = 0): string | undefined =>
  tx(h, who, 'adjudicate', { disputeId, claim: u8aToHex(encodeClaim(claim)) })

describe('signatures are bound to chain, task, dispute and role', () => {
  it('a claim from another chain (same keys, same task and dispute ids) is refused; on its own chain it wins', async () => {
    const a = await opened(run, cheat, { genesis: GENESIS_A })
    const b = await opened(run, cheat, { genesis: GENESIS_B })
    expect(a.g.ctx.genesis).not.toEqual(b.g.ctx.genesis)
    const { claim, msgs } = playOff(a.g, bob(), dave(), verify)
    expect(claim.kind).toBe('element')
    expect(adjudicate(b.h, 'Dave', claim)).toBe('Arbitration.InvalidProof')
    // nor can chain A's messages be forced on chain B
    expect(force(b.h, 'Bob', undefined, msgs[0])).toBe('Arbitration.InvalidMove')
    expect(force(b.h, 'Dave', msgs[0], msgs[1])).toBe('Arbitration.InvalidMove')
    expect(dispute(b.h).status).toBe('Open')
    expect(adjudicate(a.h, 'Dave', claim)).toBeUndefined()
    expect(dispute(a.h).status).toBe('ChallengerWon')
  })

  it('a claim or message of another dispute on the same chain and task is refused', async () => {
    const { h, g } = await opened(run, cheat)
    expect(h.run('Eve', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: run.step }).error).toBeUndefined()
    const { claim, msgs } = playOff(g, bob(), dave(), verify)
    // Eve replays Dave's winning claim (the defender's messages of dispute 0) in her dispute 1
    expect(adjudicate(h, 'Eve', claim, 1)).toBe('Arbitration.InvalidProof')
    expect(h.run('Bob', 'Arbitration', 'force_move', { disputeId: 1, theirs: '0x', mine: hexOf(msgs[0]) }).error).toBe('Arbitration.InvalidMove')
    expect(h.run('Eve', 'Arbitration', 'force_move', { disputeId: 1, theirs: hexOf(msgs[0]), mine: hexOf(msgs[1]) }).error).toBe('Arbitration.InvalidMove')
    // a commit naming dispute 0 but signed over dispute 1's context does not verify in either
    const body = verifySigned(msgs[0], bob(), verify, g.ctx)
    const crossed = signed('Bob', contextOn(h, 1), body, undefined, { seq: 0, prev: body.prev })
    expect(force(h, 'Bob', undefined, crossed)).toBe('Arbitration.InvalidMove')
    expect(h.run('Bob', 'Arbitration', 'force_move', { disputeId: 1, theirs: '0x', mine: hexOf(crossed) }).error).toBe('Arbitration.InvalidMove')
    expect(adjudicate(h, 'Dave', claim)).toBeUndefined()
  })

  it('messages signed for another task id are refused by the judge and by force_move', async () => {
    const { h } = await opened(run, cheat)
    const other = gamesFor(h, run, cheat, honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step, ctx: { ...contextOn(h, 0), taskId: 1 } })
    const { claim, msgs } = playOff(other, bob(), dave(), verify)
    expect(adjudicate(h, 'Dave', claim)).toBe('Arbitration.InvalidProof')
    expect(force(h, 'Bob', undefined, msgs[0])).toBe('Arbitration.InvalidMove')
    expect(dispute(h).moves).toBe(0)
  })

  it('the node checks messages in the chain\'s own context: another genesis, task or dispute is refused', async () => {
    const { h, g } = await opened(run, cheat)
    const commit = g.D.commit()
    const chainA = { genesisHash: h.read<string>('System', 'BlockHash', 0)! } as unknown as ChainClient
    const chainB = { genesisHash: GENESIS_B } as unknown as ChainClient
    expect(verifySigned(commit, bob(), verify, contextOf(chainA, 0, 0))).toMatchObject({ t: 'commit', seq: 0 })
    expect(() => verifySigned(commit, bob(), verify, contextOf(chainB, 0, 0))).toThrow(/bad signature/)
    expect(() => verifySigned(commit, bob(), verify, contextOf(chainA, 1, 0))).toThrow(/bad signature/)
    expect(() => verifySigned(commit, bob(), verify, contextOf(chainA, 0, 1))).toThrow(/another dispute/)
    // a defender message presented as the challenger's (role) does not verify
    expect(() => verifySigned(commit, dave(), verify, contextOf(chainA, 0, 0))).toThrow(/another account/)
  })
})
