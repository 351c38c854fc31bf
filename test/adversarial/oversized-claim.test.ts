import { cryptoWaitReady } from '@polkadot/util-crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { ZERO_HASH } from '../../protocols/commit/merkle.js'
import { MAX_CLAIM_BYTES, MAX_MESSAGE_BYTES, decodeClaim, decodeMsg, encodeClaim, encodeMsg } from '../../protocols/dispute/index.js'
import { admissibility, newProgram, validateProgram } from '../../protocols/program/index.js'
import { stepRoom } from '../../protocols/program/claim-room.js'
import * as reference from '../../protocols/reference/index.js'
import { initBackend } from '../../node/train/backend.js'
import { datasetRef, syntheticDataset } from '../../node/train/dataset.js'
import { minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'
import { gamesFor, honest, honestRun, pair, tamperOp, verify, type Run } from '../unit/dispute/fixture.js'
import { playOff } from './setup.js'

// A dispute ends in one element claim (≤ MAX_CLAIM_BYTES, 64 KiB), which
// carries the operand rows/columns the op reads for that element; on the way
// the defender may be forced to post any leaf of any tensor's row or column
// tree (≤ MAX_MESSAGE_BYTES, 256 KiB). Conv2DBackpropFilter reads a whole
// column of its input and of its output gradient (batch × height × width
// values each): for the zoo's cnn at batch 16 that is 92 KiB, at the default
// batch 64 366 KiB. Before, submit_task admitted such programs (only the
// kernels were checked), so
//   - a solver that gets the first conv kernel's gradient wrong could not be
//     claimed against: the honest challenger's claim is refused for its size,
//     it loses at the deadline and the cheater is paid;
//   - at batch 128 a column of the batch input is 392 KiB: a griefer forcing
//     that slice makes an honest defender's answer unpostable, and it loses
//     by timeout (half its stake).
// Now admissibility bounds both (protocols/program/claim-room.ts).

let run: Run

beforeAll(async () => {
  await cryptoWaitReady()
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  run = await honestRun(newProgram({ model: 'cnn', dataset: datasetRef(ds), steps: 3, optimizer: 'sgd', batchSize: 16, seed: 5, checkpointEvery: 3 }), ds, 1)
}, 180_000)

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

async function chain (): Promise<Harness> {
  const h = await Harness.create({ reference })
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, 2000n * UNIT)).error).toBeUndefined()
  for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, 2000n * UNIT)).error).toBeUndefined()
  return h
}
const submit = (h: Harness, p: ProgramArgs): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: minWindow(p, 2), solveTimeout: 1000
}).error

describe('a program whose dispute cannot end on chain is refused', () => {
  it('the cnn at batch 16: the honest claim against a wrong kernel gradient does not fit a claim, and submit_task refuses the program', async () => {
    // the first layer's kernel gradient (the backward pass reaches it last): it reads columns of x [16,28,28,1]
    const i = run.entries.findLastIndex(e => e.kernel === 'Conv2DBackpropFilter')
    expect(i).toBeGreaterThanOrEqual(0)
    // played off chain on a chain with no task: the signing context is all the players need
    const h = await Harness.create()
    const g = gamesFor(h, run, tamperOp(run, i), honest(run), { disputeId: 0, challengerName: 'Dave', disputedStep: run.step })
    const { claim, by } = playOff(g, pair('Bob').publicKey, pair('Dave').publicKey, verify)
    expect(by).toBe('challenger')
    expect(claim.kind).toBe('element')
    expect((claim as { index: number }).index).toBe(i)
    // the claim the honest challenger must make is larger than the chain takes: adjudicate would refuse it
    const bytes = encodeClaim(claim)
    expect(bytes.length).toBeGreaterThan(MAX_CLAIM_BYTES)
    expect(() => decodeClaim(bytes)).toThrow(/exceeds/)
    // and the bound the chain applies at submission sees it
    const room = stepRoom(validateProgram(run.program))
    expect(room.claim.bytes).toBeGreaterThanOrEqual(bytes.length - run.programBytes.length)
    const c = await chain()
    expect(submit(c, taskProgram({ model: 'cnn', batchSize: 16, optimizer: 'sgd' }))).toBe('Arbitration.ProgramNotVerifiable')
    expect(submit(c, taskProgram({ model: 'cnn', optimizer: 'adam' }))).toBe('Arbitration.ProgramNotVerifiable')
    expect(c.read<TaskInfo>('Arbitration', 'Tasks', 0)).toBeUndefined()
    expect(c.reserved('Alice')).toBe(0n)
  })

  it('the cnn at batch 128: a forced slice of the batch input\'s column cannot be answered, and submit_task refuses the program', async () => {
    // column 0 of x [128, 28, 28, 1]: one value per pixel of every example, one leaf
    const bytes = new Uint8Array(128 * 28 * 28 * 4)
    const slice = encodeMsg({ t: 'slice', d: 0, tree: { e: 3, io: 'in', k: 0, axis: 'col' }, index: 0, bytes, seq: 8, prev: ZERO_HASH })
    expect(slice.length).toBeGreaterThan(MAX_MESSAGE_BYTES)
    expect(() => decodeMsg(slice)).toThrow(/exceeds/)
    const c = await chain()
    expect(submit(c, taskProgram({ model: 'cnn', batchSize: 128, optimizer: 'sgd' }))).toBe('Arbitration.ProgramNotVerifiable')
    expect(c.read<TaskInfo>('Arbitration', 'Tasks', 0)).toBeUndefined()
  })

  it('the control: the mlp at batch 64 and 4096 and the cnn at batch 8 are admitted', async () => {
    const c = await chain()
    expect(submit(c, taskProgram({ model: 'cnn', batchSize: 8, optimizer: 'sgd' }))).toBeUndefined()
    expect(submit(c, taskProgram({ model: 'mlp', batchSize: 64 }))).toBeUndefined()
    const big = newProgram({ model: 'mlp', dataset: { ...run.program.dataset, trainSize: 4096 }, steps: 3, batchSize: 4096 })
    expect(admissibility(validateProgram(big), reference.supportsElement).reason).toBe('')
  })
})
