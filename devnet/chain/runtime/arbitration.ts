import { hexToU8a, u8aToHex } from '@polkadot/util'
import { sha256 } from '../../../protocols/commit/merkle.js'
import { forcedErrorRoom } from '../../../protocols/dispute/forced-error.js'
import { checkPeerBinding } from '../../../protocols/identity/peer-binding.js'
import { admissibility } from '../../../protocols/program/admissible.js'
import { MAX_PROGRAM_BYTES, parseProgramBytes } from '../../../protocols/program/bytes.js'
import { rootEveryOf } from '../../../protocols/program/program.js'
import { rootEveryOfTask, setRootEvery } from './segments.js'
import { setCommitScheme } from './state-commitment.js'
import { commitSchemeOf } from '../../../protocols/program/commit-scheme.js'
import { referenceCostOf, setStepCost } from './rerun-cost.js'
import { MAX_CHECKED_STEPS, checkableUnits, checkedUnitOf, missingSampled, requiredSample, unitOfTransition } from '../../../protocols/verification/verdict.js'
import { reserve, unreserve } from './balances.js'
import type { Plain } from './codec.js'
import type { Context } from './context.js'
import { checkFeasible, checkRewards } from './feasibility.js'
import type { Divergence } from '../../../protocols/dispute/nan.js'
import type { NodeInfo, Params, ProofRuling, RulingOutcome, SubmitTaskArgs, TaskInfo, TaskPhase, Verdict } from '../../../protocols/pallet-types.js'
import { activeAssignment } from './assignment.js'
import { backingGrace, openBackingGrace } from './late-backing.js'
import { inServedGrace } from './served-grace.js'
import { verifySignature } from './signature.js'
import { UNASSIGNED_TIMEOUT } from './stake-spec.js'
import { MAX_TASK_PERIOD, ROLE_ALL, ROLE_VERIFIER } from './spec.js'
import { blockRandomness } from './block-randomness.js'
import { forgetRuntimes, setTaskRuntime } from './runtime-capability.js'

// The Arbitration pallet: nodes and stakes, tasks and escrow, solver selection,
// proof commitment, verdicts, slashing, forced-error reveals, jackpot and
// settlement. Pure state transitions. Disputes are in disputes.ts,
// data-availability challenges in availability.ts.

const P = 'Arbitration'
const ZERO_HASH = '0x' + '00'.repeat(32)
const MAX_PEER_ID = 128
const MAX_VERIFIERS = 64
/**
 * Bytes of checkpoint entries a proof may commit, all together. They are
 * stored in the task's record, which every block reads and writes while the
 * task is open: 4 MiB of them made each block of a challenge window take
 * 17 times as long. A node commits two entries (its run index and coded root,
 * ~150 bytes).
 */
export const MAX_CHECKPOINT_BYTES = 16 * 1024

// the pallet's storage types are defined once, in protocols/ (the node's chain client decodes the same)
export type { NodeInfo, Params, ProofRuling, RulingOutcome, SubmitTaskArgs, TaskInfo, TaskPhase, Verdict }
// ---- storage helpers ----
export const params = (ctx: Context): Params => ctx.store.read<Params>(P, 'Params')
export const getNode = (ctx: Context, who: string): NodeInfo | undefined => ctx.store.get<NodeInfo>(P, 'Nodes', who)
export const putNode = (ctx: Context, who: string, n: NodeInfo): void => ctx.store.put(P, 'Nodes', who, n)
export function getTask (ctx: Context, id: bigint): TaskInfo {
  const t = ctx.store.get<TaskInfo>(P, 'Tasks', id)
  if (t === undefined) ctx.fail(P, 'TaskNotFound')
  return t
}
export const putTask = (ctx: Context, id: bigint, t: TaskInfo): void => ctx.store.put(P, 'Tasks', id, t)
export function requireNode (ctx: Context, who: string): NodeInfo {
  const n = getNode(ctx, who)
  if (n === undefined) ctx.fail(P, 'NotRegistered')
  return n
}
export function adjustActive (ctx: Context, who: string | null, delta: number): void {
  if (who === null) return
  const n = getNode(ctx, who)
  if (n === undefined) return
  n.activeTasks = Math.max(0, n.activeTasks + delta)
  putNode(ctx, who, n)
}

function validPeerId (hex: string): boolean {
  const b = hexToU8a(hex)
  return b.length > 0 && b.length <= MAX_PEER_ID && b.every(c => c > 0x20 && c < 0x7f)
}

// ---- nodes ----
export function registerNode (ctx: Context, who: string, a: { peerId: string, roles: number, stake: bigint, peerSig: string }): void {
  ctx.ensure(getNode(ctx, who) === undefined, P, 'AlreadyRegistered')
  ctx.ensure(validPeerId(a.peerId), P, 'InvalidPeerId')
  // the peer's own key signs the binding: nobody registers a peer id it does not hold
  const bound = checkPeerBinding(new TextDecoder().decode(hexToU8a(a.peerId)), hexToU8a(ctx.store.read<string>('System', 'BlockHash', 0)), hexToU8a(who), hexToU8a(a.peerSig),
    (message, signature, publicKey) => verifySignature({ kind: 'Ed25519', message, signature, publicKey }))
  if (!bound.ok) ctx.fail(P, bound.reason)
  ctx.ensure(a.roles > 0 && (a.roles & ~ROLE_ALL) === 0, P, 'InvalidRoles')
  ctx.ensure(ctx.store.get(P, 'PeerOwner', a.peerId) === undefined, P, 'PeerIdTaken')
  ctx.ensure(a.stake >= params(ctx).minStake, P, 'InsufficientStake')
  reserve(ctx, who, a.stake, [P, 'InsufficientStake'])
  putNode(ctx, who, { peerId: a.peerId, roles: a.roles, stake: a.stake, activeTasks: 0, registeredAt: ctx.now })
  ctx.store.put(P, 'PeerOwner', a.peerId, who)
  const list = ctx.store.read<string[]>(P, 'Registered')
  ctx.store.put(P, 'Registered', undefined, [...list, who])
  ctx.emit(P, 'NodeRegistered', { who, peerId: a.peerId, roles: a.roles, stake: a.stake })
}

export function addStake (ctx: Context, who: string, a: { amount: bigint }): void {
  const n = requireNode(ctx, who)
  ctx.ensure(a.amount > 0n, P, 'InsufficientStake')
  reserve(ctx, who, a.amount, [P, 'InsufficientStake'])
  n.stake += a.amount
  putNode(ctx, who, n)
  ctx.emit(P, 'StakeAdded', { who, amount: a.amount, total: n.stake })
}

export function setRoles (ctx: Context, who: string, a: { roles: number }): void {
  const n = requireNode(ctx, who)
  ctx.ensure(a.roles > 0 && (a.roles & ~ROLE_ALL) === 0, P, 'InvalidRoles')
  n.roles = a.roles
  putNode(ctx, who, n)
  ctx.emit(P, 'RolesChanged', { who, roles: a.roles })
}

export function unregisterNode (ctx: Context, who: string): void {
  const n = requireNode(ctx, who)
  ctx.ensure(n.activeTasks === 0, P, 'HasActiveTasks')
  unreserve(ctx, who, n.stake)
  ctx.store.remove(P, 'Nodes', who)
  ctx.store.remove(P, 'PeerOwner', n.peerId)
  forgetRuntimes(ctx, who)
  ctx.store.put(P, 'Registered', undefined, ctx.store.read<string[]>(P, 'Registered').filter(x => x !== who))
  ctx.emit(P, 'NodeUnregistered', { who, returned: n.stake })
}

// ---- tasks ----

export function submitTask (ctx: Context, who: string, call: SubmitTaskArgs & { program: string }): bigint {
  const { program, ...a } = call
  // at least one verifier: a task is paid only after a quorum of verdicts stood
  ctx.ensure(a.steps > 0 && a.checkpointEvery > 0 && a.checkpointEvery <= a.steps && a.challengeWindow > 0 && a.solveTimeout > 0 && a.verifierCount >= 1 && a.verifierCount <= MAX_VERIFIERS, P, 'InvalidTaskParams')
  // a deadline past the last u32 block could not be stored: at the selection, in on_initialize, it would halt the chain
  ctx.ensure(a.solveTimeout <= MAX_TASK_PERIOD && a.challengeWindow <= MAX_TASK_PERIOD, P, 'InvalidTaskParams')
  ctx.ensure(a.escrow >= a.solverReward + a.verifierReward * BigInt(a.verifierCount), P, 'InsufficientEscrow')
  const checked = checkProgram(ctx, a, program)
  const m = rootEveryOf(checked)
  reserve(ctx, who, a.escrow, [P, 'InsufficientEscrow'])
  const id = ctx.store.read<bigint>(P, 'NextTaskId')
  ctx.store.put(P, 'NextTaskId', undefined, id + 1n)
  const t: TaskInfo = {
    ...a,
    submitter: who,
    phase: 'Unassigned',
    solver: null,
    // while Unassigned: the last block before it expires (stake-spec.ts)
    deadline: ctx.now + UNASSIGNED_TIMEOUT,
    excluded: [],
    proofRoot: ZERO_HASH,
    finalStateRoot: ZERO_HASH,
    stepCount: 0,
    checkpoints: [],
    committedAt: 0,
    challengeEnd: 0,
    selectionSeed: ZERO_HASH,
    revealedForcedError: null,
    rulings: [],
    solverFailed: false,
    verdicts: [],
    openDisputes: 0,
    createdAt: ctx.now,
    extensions: 0,
    divergence: null
  }
  putTask(ctx, id, t)
  // its proof commits a root every m steps, its disputes are by segment (segments.ts)
  setRootEvery(ctx, id, m)
  // its state roots are chunked: so are the headers and leaves of its checkpoints' serves (state-commitment.ts)
  setCommitScheme(ctx, id, commitSchemeOf(checked))
  // its re-runs are priced at most at its program's cost (rerun-cost.ts)
  setStepCost(ctx, id, checked, params(ctx))
  // its solver and verifiers are picked among the peers that declared its runtime, if it needs a declaration (runtime-capability.ts)
  setTaskRuntime(ctx, id, checked.runtime)
  ctx.store.put(P, 'OpenTasks', undefined, [...ctx.store.read<bigint[]>(P, 'OpenTasks'), id])
  ctx.emit(P, 'TaskSubmitted', { taskId: id, submitter: who, escrow: a.escrow })
  return id
}

/**
 * A task whose disputes the chain could not adjudicate must not exist: a
 * cheating solver would win every dispute by the challenger's timeout. The
 * program bytes must hash to program_hash, be a valid canonical program and
 * be admissible under the reference semantics this chain judges with.
 */
function checkProgram (ctx: Context, a: SubmitTaskArgs, programHex: string): ReturnType<typeof parseProgramBytes> {
  const programHash = a.programHash
  const bytes = hexToU8a(programHex)
  ctx.ensure(bytes.length <= MAX_PROGRAM_BYTES, P, 'InvalidProgram')
  ctx.ensure(u8aToHex(sha256(bytes)) === programHash, P, 'ProgramHashMismatch')
  let program: ReturnType<typeof parseProgramBytes>
  try { program = parseProgramBytes(bytes) } catch { ctx.fail(P, 'InvalidProgram') }
  // the chain holds a solver to `steps`; a program of other steps would make an honest solver miss its deadline
  ctx.ensure(program.steps === a.steps && program.checkpointEvery === a.checkpointEvery, P, 'ProgramMismatch')
  const ref = ctx.reference
  let ok = false
  try { ok = ref !== undefined && admissibility(program, (rt, k) => ref.supportsElement(rt, k)).ok } catch { ok = false }
  ctx.ensure(ok, P, 'ProgramNotVerifiable')
  // a program this chain cannot judge before the numbers it would be held to
  ctx.ensure(rootEveryOf(program) <= params(ctx).maxRootEvery, P, 'RootEveryTooLarge')
  // a forced error marks a committed leaf that is not a checkpoint: a task must have one when they are on
  ctx.ensure(params(ctx).forcedErrorPpm === 0 || forcedErrorRoom(program.steps, rootEveryOf(program), program.checkpointEvery) > 0, P, 'NoForcedErrorRoom')
  checkFeasible(ctx, params(ctx), { solveTimeout: a.solveTimeout, challengeWindow: a.challengeWindow, verifierCount: a.verifierCount }, program)
  checkRewards(ctx, params(ctx), a, program)
  return program
}

export function commitProof (
  ctx: Context, who: string, a: { taskId: bigint, proofRoot: string, finalStateRoot: string, stepCount: number, checkpoints: string[] }
): void {
  storeProof(ctx, who, a, null)
}

/** commit_proof, or (with a divergence point) commit_diverged: a proof of fewer steps only if the run diverged. */
export function storeProof (
  ctx: Context, who: string,
  a: { taskId: bigint, proofRoot: string, finalStateRoot: string, stepCount: number, checkpoints: string[] },
  divergence: Divergence | null
): void {
  const t = getTask(ctx, a.taskId)
  if (t.solver !== who && t.excluded.includes(who)) ctx.fail(P, 'DeadlineMissed')
  ctx.ensure(t.phase === 'Solving', P, 'WrongPhase')
  ctx.ensure(t.solver === who, P, 'NotSelectedSolver')
  ctx.ensure(ctx.now <= t.deadline, P, 'DeadlineMissed')
  // a proof of fewer steps than the task's would be paid for training never done
  if (divergence === null) ctx.ensure(a.stepCount === t.steps, P, 'IncompleteProof')
  else ctx.ensure(a.stepCount < t.steps, P, 'NotDiverged')
  ctx.ensure(a.checkpoints.length <= params(ctx).maxCheckpoints && checkpointBytes(a.checkpoints) <= MAX_CHECKPOINT_BYTES, P, 'TooManyCheckpoints')
  t.phase = 'Verifying'
  t.proofRoot = a.proofRoot
  t.finalStateRoot = a.finalStateRoot
  t.stepCount = a.stepCount
  t.checkpoints = a.checkpoints
  t.divergence = divergence
  t.committedAt = ctx.now
  t.challengeEnd = ctx.now + t.challengeWindow
  putTask(ctx, a.taskId, t)
  // the verification randomness is the hash of the NEXT block, which the solver cannot steer
  ctx.emit(P, 'ProofCommitted', { taskId: a.taskId, solver: who, proofRoot: a.proofRoot, randomnessBlock: ctx.now + 1, challengeEnd: t.challengeEnd })
}

/** The bytes of committed checkpoint entries (hex). */
const checkpointBytes = (entries: string[]): number => entries.reduce((n, e) => n + (e.length - 2) / 2, 0)

/** Steps 0..n-1 are disputable: the proof's transitions, and a diverged proof's last step, taped up to its divergence point. */
export function disputableSteps (t: Pick<TaskInfo, 'stepCount' | 'divergence'>): number {
  return t.stepCount + (t.divergence === null ? 0 : 1)
}

/** The first revealed forced step (a `ForcedError` ruling's) an accept lists (its segment at m > 1), if any: it vouched for a step that does not replay. */
export function listedForcedStep (t: Pick<TaskInfo, 'rulings' | 'stepCount'>, v: Verdict, rootEvery = 1): number | undefined {
  const revealed = new Set(t.rulings.filter(r => r.outcome === 'ForcedError').map(r => r.step))
  return [...revealed].sort((a, b) => a - b).find(f => v.checkedSteps.includes(unitOfTransition(f, t.stepCount, rootEvery)))
}

export const listsForcedStep = (t: Pick<TaskInfo, 'rulings' | 'stepCount'>, v: Verdict, rootEvery = 1): boolean => listedForcedStep(t, v, rootEvery) !== undefined

export function submitVerdict (ctx: Context, who: string, a: { taskId: bigint, accept: boolean, checkedSteps: number[] }): void {
  const n = requireNode(ctx, who)
  ctx.ensure((n.roles & ROLE_VERIFIER) !== 0, P, 'NotVerifier')
  const t = getTask(ctx, a.taskId)
  ctx.ensure(t.solver !== who, P, 'SolverCannotVerify')
  // the submitter buys verification from others; its own accept would make the quorum meaningless
  ctx.ensure(t.submitter !== who, P, 'SubmitterCannotVerify')
  ctx.ensure(t.phase === 'Verifying', P, 'WrongPhase')
  // only the verifiers the chain drew give verdicts (verifier-rounds.ts): nobody can take a slot by being first
  const assignment = activeAssignment(ctx, a.taskId, who)
  if (assignment === undefined) ctx.fail(P, 'NotAssigned')
  // a verifier whose availability challenge was served votes again by its deadline, which may lie past the window (availability-serve.ts)
  ctx.ensure((ctx.now <= t.challengeEnd || inServedGrace(ctx, a.taskId, who)) && ctx.now <= assignment.deadline, P, 'ChallengeWindowClosed')
  ctx.ensure(!t.verdicts.some(v => v.verifier === who), P, 'AlreadyVoted')
  // a verdict voided at a round's close keeps no slot: its replacement votes (the list stays bounded by the draws, k per round)
  ctx.ensure(t.verdicts.filter(v => !v.void).length < MAX_VERIFIERS, P, 'VerifiersFull')
  // checked_steps names units (protocols/verification/verdict.ts): transitions, or segments j at m > 1
  const m = rootEveryOfTask(ctx, a.taskId)
  const units = checkableUnits(t.stepCount, t.divergence !== null, m)
  ctx.ensure(a.checkedSteps.length <= MAX_CHECKED_STEPS && a.checkedSteps.every(s => s < units), P, 'InvalidStep')
  // a diverged proof stands or falls with its last step: every accept vouches for it
  ctx.ensure(!a.accept || t.divergence === null || a.checkedSteps.includes(checkedUnitOf(t.stepCount + 1, t.stepCount, m)), P, 'DivergenceNotChecked')
  // "accept" vouches for the steps (segments) the draw's randomness picked for this verifier:
  // without this, accepting after checking nothing would only risk a slash at steps listed
  if (a.accept) ensureSampleChecked(ctx, who, t, a.checkedSteps, assignment.seedBlock, m)
  t.verdicts.push({ verifier: who, accept: a.accept, checkedSteps: a.checkedSteps, void: false })
  putTask(ctx, a.taskId, t)
  // its evidence comes after it (a re-run of the step first): a reject in time may be backed a grace later
  if (!a.accept) openBackingGrace(ctx, a.taskId, who, backingGrace(params(ctx), t, m, referenceCostOf(ctx, a.taskId, params(ctx))))
  ctx.emit(P, 'VerdictSubmitted', { taskId: a.taskId, verifier: who, accept: a.accept })
}

/**
 * The verifier's sample (protocols/verification/verdict.ts), seeded by the hash
 * of its assignment's randomness block (committed_at + 1 for round 0, the block
 * that closed the previous round for a replacement) and its account: the
 * solver could not know it when committing, and the verifier gets it with its draw.
 */
function ensureSampleChecked (ctx: Context, who: string, t: TaskInfo, checkedSteps: number[], seedBlock: number, m: number): void {
  ctx.ensure(ctx.now > seedBlock, P, 'RandomnessNotReady')
  const seed = blockRandomness(ctx, seedBlock)
  // a proof diverged at step 0 has no transition to sample; its diverged step is checked above
  const required = t.stepCount === 0 ? [] : requiredSample(seed, who, t.stepCount, t.verifierCount, m)
  // on chain, unit i is the transition from state i to i+1 (segment i at m > 1): the sample's step s is unit s-1 (its segment)
  ctx.ensure(missingSampled(required.map(s => checkedUnitOf(s, t.stepCount, m)), checkedSteps).length === 0, P, 'SampleNotChecked')
}

export function genesisParams (p: Params): Plain {
  return p as unknown as Plain
}
