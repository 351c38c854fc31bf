import type { KeyringPair } from '@polkadot/keyring/types'
import { u8aToHex } from '@polkadot/util'
import { sr25519Verify } from '@polkadot/util-crypto'
import { expect } from 'vitest'
import { UNIT } from '../../../devnet/chain/dev-spec.js'
import { devPair } from '../../../devnet/chain/dev-keys.js'
import type { NodeInfo, TaskInfo } from '../../../devnet/chain/runtime/arbitration.js'
import type { DisputeInfo } from '../../../devnet/chain/runtime/disputes.js'
import { fromHex, merkleRoot, sha256, toHex } from '../../../protocols/commit/merkle.js'
import { stateLeaves, stateRoot } from '../../../protocols/commit/state.js'
import { chunkedStateLeaves, chunkedStateRoot } from '../../../protocols/commit/chunked.js'
import { commitTensor, proveSlice, type TensorData } from '../../../protocols/commit/tensor.js'
import { batchIndices } from '../../../protocols/data/order.js'
import { ChallengerGame, DefenderGame, type ChallengerInit, type ProofSpacing, datasetRootOf, encodeClaim, encodeSigned, skeletonLeaves, skeletonRootOf, verifySigned, type Claim, type DisputeContext, type Signed } from '../../../protocols/dispute/index.js'
import { FORCED_ERRORS_PER_DRAW, FORCED_ERROR_VRF_CONTEXT, forcedErrorFromOutput, forcedErrorTranscript } from '../../../protocols/dispute/forced-error.js'
import { canonicalJson } from '../../../protocols/program/canonical-json.js'
import { committedSteps } from '../../../protocols/pol/segments.js'
import type { TaskProgram } from '../../../protocols/program/program.js'
import * as reference from '../../../protocols/reference/index.js'
import { STATE_PSEUDO_KERNEL, type TapeEntry } from '../../../protocols/tape/tape.js'
import { datasetRef, inputRows, labelRows, syntheticDataset, type Dataset } from '../../../node/train/dataset.js'
import { Trainer } from '../../../node/train/trainer.js'
import { reexecuteOp, tapeStep, type OpValues } from '../../../node/train/tape-recorder.js'
import { Harness } from '../chain/harness.js'
import { newProgram } from '../../../protocols/program/index.js'
import { initBackend } from '../../../node/train/backend.js'

// A real disputed step: an honest run of a tiny MLP task, the op tape of
// step `s` (0-based, on-chain numbering) with every op's values, and helpers
// to derive a consistent cheater (one op output perturbed, everything after it
// re-executed), to play the off-chain game between two in-process players and
// to settle it on the pure chain runtime.

export interface Run {
  program: TaskProgram
  programBytes: Uint8Array
  step: number
  entries: TapeEntry[]
  values: OpValues[]
  roots: string[]
  before: TensorData[]
  skeleton: Uint8Array[]
  x: TensorData
  y: TensorData
  ds: Dataset
  /** the tape holds state conversions and the state roots around the step are chunked (chunked-fixture.ts) */
  chunked?: boolean
}

export async function honestRun (program: TaskProgram, ds: Dataset, step: number): Promise<Run> {
  const t = await Trainer.create(program, ds)
  const roots: string[] = [toHex(t.stateRoot())]
  while (t.step < step) { t.runStep(); roots.push(toHex(t.stateRoot())) }
  const before = t.stateTensors().map(x => ({ ...x, values: x.values.slice() }))
  const tr = tapeStep(t)
  roots.push(tr.stateRootAfter)
  while (t.step < program.steps) { t.runStep(); roots.push(toHex(t.stateRoot())) }
  t.dispose()
  const all = new Uint32Array(ds.trainSize).map((_, i) => i)
  const { info: _i, ...bare } = program as TaskProgram & { info?: unknown }
  return {
    program, programBytes: new TextEncoder().encode(canonicalJson(bare)), step, entries: tr.entries, values: tr.values, roots, before,
    skeleton: skeletonLeaves(tr.entries), ds,
    x: { shape: [ds.trainSize, ds.rowSize], dtype: 'float32', values: inputRows(ds, all) },
    y: { shape: [ds.trainSize, ds.classes], dtype: 'float32', values: labelRows(ds, all) }
  }
}

export interface Side { entries: TapeEntry[], values: OpValues[], roots: string[] }

const commitHex = (t: TensorData): string => toHex(commitTensor(t).root)

/** A consistent cheater: output 0 of entry `i` gets element `el` perturbed; every later op is re-executed on it. */
export function tamperOp (run: Run, i: number, el = 0, alsoInput?: number, value?: number): Side {
  const values: OpValues[] = run.values.map(v => ({ inputs: v.inputs, outputs: v.outputs }))
  const entries: TapeEntry[] = run.entries.map(e => ({ ...e, inputs: e.inputs.map(x => ({ ...x })), outputs: e.outputs.map(o => ({ ...o })) }))
  const o = values[i].outputs[0]
  const nv = o.values.slice() as Float32Array
  nv[el % nv.length] = value ?? nv[el % nv.length] + 1
  values[i] = { inputs: values[i].inputs, outputs: [{ ...o, values: nv }, ...values[i].outputs.slice(1)] }
  entries[i].outputs[0].commitment = commitHex(values[i].outputs[0])
  if (alsoInput !== undefined) {
    // the op read a wrong input (e.g. a batch row that is not the dataset's): input and output both carry it
    values[i] = { inputs: values[i].inputs.map((t, k) => k === alsoInput ? values[i].outputs[0] : t), outputs: values[i].outputs }
    entries[i].inputs[alsoInput].commitment = entries[i].outputs[0].commitment
  }
  const changed = new Set<number>([i])
  for (let j = i + 1; j < entries.length; j++) {
    const e = entries[j]
    let touched = false
    const ins = e.inputs.map((inp, k) => {
      if (inp.ref.kind === 'op' && changed.has(inp.ref.index)) { touched = true; return values[inp.ref.index].outputs[inp.ref.output] }
      return values[j].inputs[k]
    })
    if (!touched) continue
    changed.add(j)
    ins.forEach((v, k) => { e.inputs[k].commitment = commitHex(v) })
    if (e.kernel === STATE_PSEUDO_KERNEL) { values[j] = { inputs: ins, outputs: [] }; continue }
    const outs = reexecuteOp(e, ins)
    values[j] = { inputs: ins, outputs: outs }
    outs.forEach((v, k) => { e.outputs[k].commitment = commitHex(v) })
  }
  const post = toHex(stateRoot(values[values.length - 1].inputs, run.step + 1))
  const roots = [...run.roots.slice(0, run.step + 1), post, ...run.roots.slice(run.step + 2).map(() => post)]
  return { entries, values, roots }
}

/** A solver that perturbs a weight after the step (no op produced it): its tape is honest, its post-state root is not. */
export function tamperWeight (run: Run): Side {
  const after = run.values[run.values.length - 1].inputs.map(t => ({ ...t, values: t.values.slice() }))
  after[0].values[0] += 1
  const post = toHex(stateRoot(after, run.step + 1))
  return { entries: run.entries, values: run.values, roots: [...run.roots.slice(0, run.step + 1), post, ...run.roots.slice(run.step + 2).map(() => post)] }
}

export const honest = (run: Run): Side => ({ entries: run.entries, values: run.values, roots: run.roots })

export const pair = (name: string): KeyringPair => devPair(`//${name}`)
export const verify = (m: Uint8Array, s: Uint8Array, p: Uint8Array): boolean => sr25519Verify(m, s, p)

/** moves: signed messages exchanged (off chain); txs: dispute transactions after the opening (forces, answers, claim, timeout) */
export interface Outcome { status: DisputeInfo['status'], moves: number, txs: number, claim?: Claim, claimBytes: number, events: string[], error?: string, adjudicateMs: number, how: 'claim' | 'timeout' }

export interface PlayOptions {
  forcedErrorPpm?: number
  defenderLies?: boolean
  /** the defender stops after this many messages (both sides counted) and ignores forces */
  defenderSilentAfter?: number
  /** the defender stops sending off chain after this many messages but answers forces on chain */
  defenderOffChainAfter?: number
  challengerOpensWrongPre?: boolean
  disputedStep?: number
  /** what the challenger knows of NaNs in its own run of the step, and the proof's divergence point */
  nan?: Pick<ChallengerInit, 'firstNan' | 'stateNan' | 'divergence'>
  /** the proof commits a root every m > 1 steps (its diverged last step is disputed alone): both players hold its leaves */
  spacing?: ProofSpacing
}

/** What every dispute message on harness chain `h` is bound to. */
export const contextOn = (h: Harness, disputeId: number, taskId = 0): DisputeContext => ({ genesis: fromHex(h.read<string>('System', 'BlockHash', 0)!.slice(2)), taskId, disputeId })
export const hexOf = (s: Signed): string => u8aToHex(encodeSigned(s))

export const STAKE = 10_000n * UNIT

/** A harness chain where Bob (solver) was selected for the run's task and committed the defender's proof; Dave, Eve and Ferdie are verifiers. */
/** `verifiers`: which of Dave, Eve and Ferdie register with the verifier role (the chain draws the task's verifiers among them); the others are whistleblowers only. Default: all three. `extraVerifiers`: that many more verifier accounts (Verifier1…, funded by Alice), for tasks asking more verifiers than three: a task reaches a solver only once its verifier_count verifiers can answer for it. */
export async function taskOnChain (
  run: Run, defender: Side,
  o: {
    forcedErrorPpm?: number
    disputeClock?: number
    challengeWindow?: number
    verifierCount?: number
    verifierReward?: bigint
    genesis?: string
    diverged?: { stepCount: number, entry: number, flat: number }
    commit?: boolean
    verifiers?: string[]
    extraVerifiers?: number
    /** the submitter's skeleton_root (default: the run's own) */
    skeletonRoot?: string
    /** Bob's stake (default STAKE) */
    solverStake?: bigint
  } = {}
): Promise<Harness> {
  const h = await Harness.create({ reference, forcedErrorPpm: o.forcedErrorPpm, disputeClock: o.disputeClock, genesis: o.genesis })
  expect(h.run('Bob', 'Arbitration', 'register_node', h.registerArgs('Bob', 2, o.solverStake ?? STAKE)).error).toBeUndefined()
  for (const v of ['Dave', 'Eve', 'Ferdie']) expect(h.run(v, 'Arbitration', 'register_node', h.registerArgs(v, (o.verifiers ?? [v]).includes(v) ? 4 | 8 : 8, STAKE)).error).toBeUndefined()
  for (let i = 1; i <= (o.extraVerifiers ?? 0); i++) {
    const name = `Verifier${i}`
    h.accounts[name] = u8aToHex(devPair(`//${name}`).publicKey)
    expect(h.run('Alice', 'Balances', 'transfer_keep_alive', { dest: { Id: h.accounts[name] }, value: 2n * STAKE }).error).toBeUndefined()
    expect(h.run(name, 'Arbitration', 'register_node', h.registerArgs(name, 4, STAKE)).error).toBeUndefined()
  }
  const dsRoot = datasetRootOf(commitTensor(run.x).root, commitTensor(run.y).root)
  const r = h.run('Alice', 'Arbitration', 'submit_task', {
    programHash: '0x' + toHex(sha256(run.programBytes)),
    program: u8aToHex(run.programBytes),
    datasetRoot: '0x' + toHex(dsRoot),
    skeletonRoot: o.skeletonRoot ?? '0x' + toHex(skeletonRootOf(run.skeleton)),
    steps: run.program.steps,
    checkpointEvery: run.program.checkpointEvery,
    escrow: 1000n * UNIT,
    solverReward: 600n * UNIT,
    verifierReward: o.verifierReward ?? 100n * UNIT,
    verifierCount: o.verifierCount ?? 2,
    challengeWindow: o.challengeWindow ?? 50,
    solveTimeout: 20
  })
  expect(r.error).toBeUndefined()
  h.advance(1)
  expect(taskOf(h).solver).toBe(h.accounts.Bob)
  const dv = o.diverged
  if (o.commit === false) return h
  if (dv !== undefined) {
    // a diverged proof: states 0..k and where step k's tape produced its first NaN
    const roots = defender.roots.slice(0, dv.stepCount + 1)
    expect(h.run('Bob', 'Arbitration', 'commit_diverged', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(roots.map(fromHex))), finalStateRoot: '0x' + roots[roots.length - 1], checkpoints: [], ...dv }).error).toBeUndefined()
  } else expect(h.run('Bob', 'Arbitration', 'commit_proof', { taskId: 0, proofRoot: '0x' + toHex(merkleRoot(defender.roots.map(fromHex))), finalStateRoot: '0x' + defender.roots[defender.roots.length - 1], stepCount: run.program.steps, checkpoints: [] }).error).toBeUndefined()
  return h
}

/** Submits the task, commits the defender's proof, opens the dispute and plays it to the end on the harness chain. */
export async function playOnChain (
  run: Run, defender: Side, challenger: Side, o: PlayOptions & { diverged?: { stepCount: number, entry: number, flat: number } } = {}
): Promise<{ outcome: Outcome, h: Harness, solver: string, challengerName: string }> {
  const h = await taskOnChain(run, defender, o)
  const step = o.disputedStep ?? run.step
  expect(h.run('Dave', 'Arbitration', 'open_dispute', { taskId: 0, defender: h.accounts.Bob, kind: 'SolverProof', disputedStep: step }).error).toBeUndefined()
  return { outcome: playDispute(h, run, defender, challenger, { ...o, disputeId: 0, challengerName: 'Dave', disputedStep: step }), h, solver: 'Bob', challengerName: 'Dave' }
}

/**
 * Plays the already opened dispute `disputeId` (Bob defends, challengerName
 * challenges) to its end: messages go off chain; the chain sees the claim,
 * and forces when the defender goes quiet.
 */
export interface Games { D: DefenderGame, C: ChallengerGame, ctx: DisputeContext }

/** The two pure players of dispute `disputeId` on `h` (Bob defends, challengerName challenges); `ctx` overrides the signing context. */
export function gamesFor (
  h: Harness, run: Run, defender: Side, challenger: Side,
  o: Pick<PlayOptions, 'defenderLies' | 'challengerOpensWrongPre' | 'nan' | 'spacing'> & { disputeId: number, challengerName: string, disputedStep: number, ctx?: DisputeContext }
): Games {
  const ds = run.ds
  const step = o.disputedStep
  const bob = pair('Bob'); const dave = pair(o.challengerName)
  const ctx = o.ctx ?? contextOn(h, o.disputeId)
  const base = { disputeId: o.disputeId, genesis: ctx.genesis, taskId: ctx.taskId, step }
  const tensorOf = (s: Side) => (e: number, io: 'in' | 'out', k: number): TensorData => io === 'in' ? s.values[e].inputs[k] : s.values[e].outputs[k]
  // with a root every m steps the proof's leaves are the roots of steps 0, m, 2m, …, its last
  const sp = o.spacing
  const leaves = (roots: string[]): string[] => sp === undefined ? roots : committedSteps(sp.steps, sp.rootEvery).map(s => roots[s])
  const D = new DefenderGame({
    ...base, entries: defender.entries, tensor: tensorOf(defender), account: bob.publicKey, sign: m => bob.sign(m),
    stateRoots: leaves(defender.roots), lie: o.defenderLies, program: run.programBytes, ...(sp !== undefined ? { spacing: sp } : {})
  })
  const leavesOf = run.chunked === true ? chunkedStateLeaves : stateLeaves
  const rootOf = run.chunked === true ? chunkedStateRoot : stateRoot
  const before = o.challengerOpensWrongPre === true
    ? run.before.map((t, i) => i === 0 ? { ...t, values: t.values.map((v, j) => j === 0 ? v + 1 : v) as Float32Array } : t)
    : run.before
  const C = new ChallengerGame({
    ...base, entries: challenger.entries, tensor: tensorOf(challenger), account: dave.publicKey, sign: m => dave.sign(m), defender: bob.publicKey,
    stateRoots: leaves(o.challengerOpensWrongPre === true ? defender.roots.map((x, i) => i === step ? toHex(rootOf(before, step)) : x) : defender.roots),
    ...(sp !== undefined ? { spacing: sp } : {}),
    preStateLeaves: leavesOf(before, step), postRoot: fromHex(challenger.roots[step + 1]), program: run.programBytes, skeleton: run.skeleton,
    dataset: { xRoot: commitTensor(run.x).root, yRoot: commitTensor(run.y).root, row: (name, i) => proveSlice(name === 'x' ? run.x : run.y, 'row', i) },
    ...o.nan
  })
  const rows = batchIndices(run.program.seed, ds.trainSize, run.program.batchSize, step)
  C.batchRow = r => rows[r]
  C.operandRefs = (e, flat) => reference.elementOperands(run.program.runtime, reference.opShapeOf(e), flat)
  return { D, C, ctx }
}

export function playDispute (
  h: Harness, run: Run, defender: Side, challenger: Side, o: PlayOptions & { disputeId: number, challengerName: string, disputedStep: number }
): Outcome {
  const disputeId = o.disputeId
  const bob = pair('Bob'); const dave = pair(o.challengerName)
  const { D, C, ctx } = gamesFor(h, run, defender, challenger, o)
  let moves = 0
  let txs = 0
  const tx = (who: string, method: string, args: Record<string, unknown>): ReturnType<Harness['run']> => { txs++; return h.run(who, 'Arbitration', method, { disputeId, ...args }) }
  const finish = (who: string, claim: Claim): Outcome => {
    const bytes = encodeClaim(claim)
    const t0 = performance.now()
    const res = tx(who, 'adjudicate', { claim: u8aToHex(bytes) })
    const ms = performance.now() - t0
    const d = h.read<DisputeInfo>('Arbitration', 'Disputes', disputeId)!
    return { status: d.status, moves, txs, claim, claimBytes: bytes.length, events: res.events, error: res.error, adjudicateMs: ms, how: 'claim' }
  }
  const quiet = (): boolean => (o.defenderSilentAfter !== undefined && moves >= o.defenderSilentAfter) ||
    (o.defenderOffChainAfter !== undefined && moves >= o.defenderOffChainAfter)
  /** the defender went quiet: the challenger forces its pending move; a silent defender lets it time out, a withholding one answers on chain */
  const force = (): { outcome?: Outcome, answer?: Signed } => {
    const p = C.pending
    const r = tx(o.challengerName, 'force_move', p === undefined ? { theirs: '0x', mine: '0x' } : { theirs: hexOf(p.theirs), mine: hexOf(p.mine) })
    expect(r.error).toBeUndefined()
    const f = h.read<DisputeInfo>('Arbitration', 'Disputes', disputeId)!.force!
    if (o.defenderSilentAfter !== undefined) {
      h.advance(f.due - h.number - 1)
      expect(tx('Alice', 'claim_timeout', {}).error).toBe('Arbitration.NotExpired')
      const res = tx('Alice', 'claim_timeout', {})
      const d = h.read<DisputeInfo>('Arbitration', 'Disputes', disputeId)!
      return { outcome: { status: d.status, moves, txs, claimBytes: 0, events: res.events, error: res.error, adjudicateMs: 0, how: 'timeout' } }
    }
    const answer = p === undefined ? D.commit() : D.respond(verifySigned(p.mine, dave.publicKey, verify, ctx), p.mine).reply!
    expect(tx('Bob', 'answer_move', { answer: hexOf(answer) }).error).toBeUndefined()
    return { answer }
  }
  // D moves first: its tape commitment
  let dMsg: Signed
  if (quiet()) {
    const f = force()
    if (f.outcome !== undefined) return f.outcome
    dMsg = f.answer!
  } else dMsg = D.commit()
  moves++
  for (let round = 0; round < 200; round++) {
    const next = C.onMessage(verifySigned(dMsg, bob.publicKey, verify, ctx), dMsg)
    if ('claim' in next) return finish(o.challengerName, next.claim)
    if ('fail' in next) throw new Error(`challenger failed: ${next.fail}`)
    if ('demand' in next) throw new Error(`the challenger demands ${next.demand}`)
    moves++
    let ans: { reply?: Signed, claim?: Claim }
    if (quiet()) {
      const f = force()
      if (f.outcome !== undefined) return f.outcome
      ans = { reply: f.answer }
    } else ans = D.respond(verifySigned(next.send, dave.publicKey, verify, ctx), next.send)
    if (ans.claim !== undefined) return finish('Bob', ans.claim)
    dMsg = ans.reply!
    moves++
  }
  throw new Error('the game did not end in 200 rounds')
}

export const nodeOf = (h: Harness, name: string): NodeInfo => h.read<NodeInfo>('Arbitration', 'Nodes', h.accounts[name])!
export const taskOf = (h: Harness): TaskInfo => h.read<TaskInfo>('Arbitration', 'Tasks', 0)!

/** ⌈log2 n⌉ */
export const clog2 = (n: number): number => n <= 1 ? 0 : Math.ceil(Math.log2(n))

/** One pick of a draw: the step it orders (or null), its VRF output and proof (0x hex). */
export interface DrawPick { step: number | null, output: string, proof: string }
/**
 * A solver's draw on the harness: step, output, proof: its first forced step and that pick's VRF (what
 * reveal_forced_error takes); steps: all of them; picks: every pick (reveal_draw takes them all).
 */
export interface HarnessDraw { step: number | null, steps: number[], output: string, proof: string, picks: DrawPick[] }

/** Bob's private forced-error draw for the harness chain's task 0 (deterministic block hashes and a deterministic VRF output). */
export async function forcedDrawOf (run: Run, signer = 'Bob'): Promise<HarnessDraw> {
  const h = await taskOnChain(run, honest(run), { forcedErrorPpm: 1_000_000 })
  return drawOn(h, signer)
}

/** `signer`'s VRFs over task 0's pick transcripts on `h` (the draw is only Bob's when signer is Bob). */
export function drawOn (h: Harness, signer = 'Bob'): HarnessDraw {
  const t = taskOf(h)
  const ppm = h.read<{ forcedErrorPpm: number }>('Arbitration', 'Params')!.forcedErrorPpm
  const m = h.read<number>('Arbitration', 'TaskRootEvery', 0) ?? 1
  const picks: DrawPick[] = []
  for (let pick = 1; pick <= FORCED_ERRORS_PER_DRAW; pick++) {
    const vrf = pair(signer).vrfSign(forcedErrorTranscript(0, fromHex(t.selectionSeed.slice(2)), pick), FORCED_ERROR_VRF_CONTEXT)
    const output = vrf.slice(0, 32)
    picks.push({ step: forcedErrorFromOutput(output, t.steps, ppm, m, t.checkpointEvery), output: u8aToHex(output), proof: u8aToHex(vrf.slice(32)) })
  }
  const steps = [...new Set(picks.flatMap(p => p.step === null ? [] : [p.step]))].sort((a, b) => a - b)
  const first = picks.find(p => p.step === (steps[0] ?? null)) ?? picks[0]
  return { step: steps[0] ?? null, steps, output: first.output, proof: first.proof, picks }
}

/** The reveal_draw arguments of a draw: every pick's VRF, pick 1 first. */
export const drawArgs = (d: HarnessDraw): { vrfOutputs: string[], vrfProofs: string[] } =>
  ({ vrfOutputs: d.picks.map(p => p.output), vrfProofs: d.picks.map(p => p.proof) })

/** steps: every forced step of the draw (the jackpot is split across them); run: taped with `step`, the first, marked; output, proof: its pick's VRF */
export interface ForcedRun { run: Run, step: number, steps: number[], output: string, proof: string, picks: DrawPick[] }

/** A small SGD MLP task whose solver (Bob, on the harness chain) draws a forced error: the run taped at that step, and the VRF draw. */
export async function forcedTask (): Promise<ForcedRun> {
  await initBackend('wasm')
  const ds = syntheticDataset(7, 64, 8)
  const p = newProgram({ model: 'mlp', dataset: datasetRef(ds), steps: 5, optimizer: 'sgd', batchSize: 4, seed: 11, checkpointEvery: 5 })
  const d = await forcedDrawOf(await honestRun(p, ds, 2))
  if (d.step === null) throw new Error('the draw ordered no forced error')
  return { run: await honestRun(p, ds, d.step), step: d.step, steps: d.steps, output: d.output, proof: d.proof, picks: d.picks }
}

/** One block; then, as the solver's node does on DrawRequested, `signer` reveals its whole draw if the chain asks for it (reveal_draw). */
export function advanceRevealing (h: Harness, signer = 'Bob'): string[] {
  const ev = h.advance(1)
  const r = h.read<{ revealed: boolean }>('Arbitration', 'DrawRequests', 0 as never)
  if (r !== undefined && !r.revealed) {
    const out = h.run(signer, 'Arbitration', 'reveal_draw', { taskId: 0, ...drawArgs(drawOn(h, signer)) })
    if (out.error !== undefined) throw new Error(`reveal_draw: ${out.error}`)
    ev.push(...out.events)
  }
  return ev
}
