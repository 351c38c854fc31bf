import { beforeEach, describe, expect, it } from 'vitest'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { UNIT } from '../../devnet/chain/dev-spec.js'
import type { ReferenceSemantics } from '../../devnet/chain/runtime/adjudication.js'
import type { TaskInfo } from '../../devnet/chain/runtime/arbitration.js'
import { sha256 } from '../../protocols/commit/merkle.js'
import { CPU_RUNTIME, NODE_GPU_RUNTIME, NODE_RUNTIME, canonicalJson, type TaskProgram } from '../../protocols/program/index.js'
import * as reference from '../../protocols/reference/index.js'
import { TEST_TEXT, minWindow, taskProgram, type ProgramArgs } from '../helpers/program.js'
import { Harness } from '../unit/chain/harness.js'

// Attack: post a task nobody can adjudicate (a runtime without element
// references, or an op the chain's reference lacks), so that a solver that
// commits anything wins every dispute by the challenger's timeout and is
// paid from the escrow. The real runtime must refuse such a task at
// submit_task: no task stored, no escrow reserved, no solver ever selected.

const H = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32)

let h: Harness
const submit = (p: { programHash: string, programHex: string }): string | undefined => h.run('Alice', 'Arbitration', 'submit_task', {
  programHash: p.programHash, program: p.programHex, datasetRoot: H(2), skeletonRoot: H(3), steps: 100, checkpointEvery: 10,
  escrow: 1000n * UNIT, solverReward: 600n * UNIT, verifierReward: 100n * UNIT, verifierCount: 2, challengeWindow: windowOf(p.programHex), solveTimeout: 1000
}).error
/** The window the chain takes for the program in these bytes (2 verifiers); bytes that are no program are refused before it counts. */
function windowOf (hex: string): number {
  try { return minWindow(JSON.parse(new TextDecoder().decode(hexToU8a(hex))) as TaskProgram, 2) } catch { return 1 }
}

async function chain (ref: ReferenceSemantics = reference, maxRootEvery?: number): Promise<void> {
  h = await Harness.create({ reference: ref, maxRootEvery })
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, 2000n * UNIT)).error).toBeUndefined()
  // verifiers whose stake answers for the tasks' penalty: without them no task reaches a solver
  for (const n of ['Dave', 'Eve']) expect(h.run(n, 'Arbitration', 'register_node', h.registerArgs(n, 4, 2000n * UNIT)).error).toBeUndefined()
}

/** Nothing happened: no task, no escrow, no solver selected over the next blocks. */
function nothingPosted (): void {
  expect(h.read<TaskInfo>('Arbitration', 'Tasks', 0)).toBeUndefined()
  expect(h.reserved('Alice')).toBe(0n)
  expect(h.advance(3)).not.toContain('Arbitration.SolverSelected')
}

describe('tasks the chain could not adjudicate are refused at submit_task', () => {
  beforeEach(async () => { await chain() })

  for (const runtime of [CPU_RUNTIME, NODE_RUNTIME, NODE_GPU_RUNTIME]) {
    for (const model of ['mlp', 'cnn']) {
      it(`${model} on ${runtime}`, () => {
        expect(submit(taskProgram({ model, runtime }))).toBe('Arbitration.ProgramNotVerifiable')
        nothingPosted()
      })
    }
  }

  it('the hash of an unjudgeable program with the bytes of a judgeable one', () => {
    const cpu = taskProgram({ runtime: CPU_RUNTIME })
    const wasm = taskProgram()
    expect(submit({ programHash: cpu.programHash, programHex: wasm.programHex })).toBe('Arbitration.ProgramHashMismatch')
    nothingPosted()
  })

  it('a program the chain cannot parse (so it could not read the runtime or data order in a claim)', () => {
    const cpu = taskProgram({ runtime: CPU_RUNTIME })
    // the same program as non-canonical bytes (a space before a colon): refused, not reinterpreted
    const text = new TextDecoder().decode(cpu.bytes).replace('"runtime":', '"runtime" :')
    const bytes = new TextEncoder().encode(text)
    expect(submit({ programHash: u8aToHex(sha256(bytes)), programHex: u8aToHex(bytes) })).toBe('Arbitration.InvalidProgram')
    nothingPosted()
  })

  it('a program with state roots every m > 1 steps on a chain whose max_root_every is 1 (its nodes play no segment disputes)', async () => {
    const bytesOf = (m: number): { programHash: string, programHex: string } => {
      const bytes = new TextEncoder().encode(canonicalJson({ ...taskProgram().program, rootEvery: m }))
      return { programHash: u8aToHex(sha256(bytes)), programHex: u8aToHex(bytes) }
    }
    await chain(reference, 1)
    expect(submit(bytesOf(5))).toBe('Arbitration.RootEveryTooLarge')
    nothingPosted()
    // a chain that takes m up to 5: m = 10 is still refused, m = 5 posted
    await chain(reference, 5)
    expect(submit(bytesOf(10))).toBe('Arbitration.RootEveryTooLarge')
    nothingPosted()
    expect(submit(bytesOf(5))).toBeUndefined()
    expect(h.read<TaskInfo>('Arbitration', 'Tasks', 0)).toBeDefined()
    // and so is the same program at rootEvery 1
    expect(submit(bytesOf(1))).toBeUndefined()
  })

  it('the control: a judgeable program is accepted and a solver selected', () => {
    expect(submit(taskProgram({ model: 'cnn', batchSize: 8 }))).toBeUndefined()
    expect(h.advance(1)).toContain('Arbitration.SolverSelected')
  })
})

describe('an op without a reference on the chain', () => {
  it('a cnn task is refused by a chain whose reference lacks MaxPoolGrad; the mlp (no pooling) is not', async () => {
    await chain({ ...reference, supportsElement: (rt: string, k: string) => k !== 'MaxPoolGrad' && reference.supportsElement(rt, k) })
    const cnn: ProgramArgs = taskProgram({ model: 'cnn', optimizer: 'sgd', batchSize: 8 })
    expect(submit(cnn)).toBe('Arbitration.ProgramNotVerifiable')
    nothingPosted()
    expect(submit(taskProgram({ model: 'mlp', optimizer: 'sgd' }))).toBeUndefined()
  })

  it('a GPT task is accepted by the chain; refused by one whose reference lacks Transpose (the attention heads) or Exp', async () => {
    const gpt = (): ProgramArgs => taskProgram({ model: 'gpt', dataset: TEST_TEXT, batchSize: 16 })
    await chain()
    expect(submit(gpt())).toBeUndefined()
    for (const missing of ['Transpose', 'Exp']) {
      await chain({ ...reference, supportsElement: (rt: string, k: string) => k !== missing && reference.supportsElement(rt, k) })
      expect(submit(gpt())).toBe('Arbitration.ProgramNotVerifiable')
      nothingPosted()
    }
  })

  it('a GPT whose @state entry is too large for a state claim is refused (a solver could change a weight after a step and win by timeout)', async () => {
    await chain()
    const big = taskProgram({ model: 'gpt', gpt: { layers: 12, dModel: 8, heads: 2, mlp: 8 }, dataset: TEST_TEXT, batchSize: 16, optimizer: 'adam' })
    expect(submit(big)).toBe('Arbitration.ProgramNotVerifiable')
    nothingPosted()
  })

  it('a chain without reference semantics accepts no task at all', async () => {
    h = await Harness.create()
    expect(submit(taskProgram())).toBe('Arbitration.ProgramNotVerifiable')
    nothingPosted()
  })
})
