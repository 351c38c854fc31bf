import { describe, expect, it } from 'vitest'
import type { ChainClient } from '../../../node/chain/client.js'
import { announcementCheck } from '../../../node/roles/announcement-check.js'

// The rules a peer applies to task and proof announcements before storing or
// relaying them (the gossip path is tested with real peers in
// test/reliability/hostile-gossip.test.ts). The chain view is a table here.

const SUBMITTER = '12D3KooWSubmitterSubmitterSubmitterSubmit'
const SOLVER = '12D3KooWSolverSolverSolverSolverSolverSol'
const OTHER = '12D3KooWOtherOtherOtherOtherOtherOtherOth'
const UNREGISTERED = '12D3KooWNobodyNobodyNobodyNobodyNobodyNob'
const H = (b: string): string => '0x' + b.repeat(64)
const view = {
  task: async (id: number | bigint) => Number(id) === 3 ? { programHash: H('a'), steps: 20, submitter: '0xsub', solver: '0xsol', proofRoot: H('c'), finalStateRoot: H('d'), verdicts: [{ verifier: '0xoth', accept: true }] } : null,
  dispute: async (id: number | bigint) => Number(id) === 5 ? { taskId: 3n, challenger: '0xoth', defender: '0xsol' } : null,
  peerOwner: async (p: string) => ({ [SUBMITTER]: '0xsub', [SOLVER]: '0xsol', [OTHER]: '0xoth' } as Record<string, string>)[p] ?? null,
  nextTaskId: async () => 4n
} as unknown as ChainClient
const check = announcementCheck(view)
const task = (o: Record<string, unknown> = {}): never => ({ v: 1, type: 'task', taskId: 3, programHash: H('a'), programCid: 'bafy', submitter: SUBMITTER, steps: 20, createdAt: 1, ...o }) as never
const proof = (o: Record<string, unknown> = {}): never => ({ v: 1, type: 'proof', taskId: 3, solver: SOLVER, proofRoot: H('c'), finalStateRoot: H('d'), proofCid: 'bafy', checkpoints: [], ...o }) as never

describe('announcement checks against the chain', () => {
  it('tasks: only the on-chain submitter\'s peer, with the chain\'s program and steps', async () => {
    expect(await check('tasks', task(), SUBMITTER)).toBe('accept')
    expect(await check('tasks', task(), undefined)).toBe('accept') // relayed by a neighbour: checked by content
    expect(await check('tasks', task(), OTHER)).toBe('reject') // signed by someone else than it names
    expect(await check('tasks', task({ submitter: OTHER }), OTHER)).toBe('reject') // not the submitter's peer
    expect(await check('tasks', task({ programHash: H('b') }), SUBMITTER)).toBe('reject')
    expect(await check('tasks', task({ steps: 21 }), SUBMITTER)).toBe('reject')
    expect(await check('tasks', task({ taskId: 5 }), SUBMITTER)).toBe('ignore') // maybe our view lags
    expect(await check('tasks', task({ taskId: 4 + 16 }), SUBMITTER)).toBe('reject') // made up
  })

  it('proofs: only the task\'s solver, with the committed roots', async () => {
    expect(await check('proofs', proof(), SOLVER)).toBe('accept')
    expect(await check('proofs', proof(), OTHER)).toBe('reject')
    expect(await check('proofs', proof({ solver: OTHER }), OTHER)).toBe('reject')
    expect(await check('proofs', proof({ proofRoot: H('e') }), SOLVER)).toBe('reject')
    expect(await check('proofs', proof({ taskId: 9 }), SOLVER)).toBe('ignore')
  })

  it('verdicts: only from the verifier they name, as the chain holds it', async () => {
    const v = (o: Record<string, unknown> = {}): never => ({ v: 1, type: 'verdict', taskId: 3, verifier: OTHER, accept: true, checkedSteps: [], ...o }) as never
    expect(await check('verdicts', v(), OTHER)).toBe('accept')
    expect(await check('verdicts', v(), undefined)).toBe('accept')
    expect(await check('verdicts', v(), SOLVER)).toBe('reject') // signed by someone else
    expect(await check('verdicts', v({ accept: false }), OTHER)).toBe('reject') // the chain holds the other verdict
    expect(await check('verdicts', v({ verifier: SOLVER }), SOLVER)).toBe('ignore') // not on chain yet
    expect(await check('verdicts', v({ verifier: UNREGISTERED }), UNREGISTERED)).toBe('reject') // not a registered peer
    expect(await check('verdicts', v({ taskId: 5 }), OTHER)).toBe('ignore') // maybe our view lags
    expect(await check('verdicts', v({ taskId: 4 + 16 }), OTHER)).toBe('reject') // made up
  })

  it('disputes: from its challenger or defender, about a dispute the chain holds on that task', async () => {
    const d = (o: Record<string, unknown> = {}): never => ({ v: 1, type: 'dispute', taskId: 3, disputeId: 5, challenger: OTHER, defender: SOLVER, phase: 'opened', ...o }) as never
    expect(await check('disputes', d(), OTHER)).toBe('accept')
    expect(await check('disputes', d(), SOLVER)).toBe('accept')
    expect(await check('disputes', d(), SUBMITTER)).toBe('reject') // a bystander
    expect(await check('disputes', d({ challenger: SUBMITTER }), SOLVER)).toBe('reject') // not the chain's challenger
    expect(await check('disputes', d({ taskId: 2 }), OTHER)).toBe('reject') // the dispute is on another task
    expect(await check('disputes', d({ disputeId: 6 }), OTHER)).toBe('ignore') // not on chain yet
    expect(await check('disputes', d({ taskId: 4 + 16, disputeId: 6 }), OTHER)).toBe('reject') // made up
  })

  it('an unregistered author is refused before anything the chain may not show yet: no free IGNORE for a key made per message', async () => {
    // each of these was IGNOREd (no penalty) after its chain queries: the task or dispute is not on chain yet
    expect(await check('tasks', task({ taskId: 5, submitter: UNREGISTERED }), UNREGISTERED)).toBe('reject')
    expect(await check('proofs', proof({ taskId: 9, solver: UNREGISTERED }), UNREGISTERED)).toBe('reject')
    expect(await check('verdicts', { v: 1, type: 'verdict', taskId: 5, verifier: UNREGISTERED, accept: true, checkedSteps: [] } as never, UNREGISTERED)).toBe('reject')
    expect(await check('disputes', { v: 1, type: 'dispute', taskId: 3, disputeId: 6, challenger: UNREGISTERED, defender: SOLVER, phase: 'opened' } as never, UNREGISTERED)).toBe('reject')
  })
})
