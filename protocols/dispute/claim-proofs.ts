import { bytesEqual, sha256 } from '../commit/merkle.js'
import { sizeOf } from '../commit/tensor.js'
import { initialStateRoot, initLayout } from '../program/init.js'
import { isCommittedStep, leafOfStep, proofDepth } from '../pol/segments.js'
import type { TapeEntry } from '../tape/tape.js'
import { h32, hashes, int, onPath } from './claim-fields.js'
import { decodeEntry } from './entry.js'
import { InitClaimRejected, programOf } from './init-claim.js'
import type { JudgeEnv, StepEnv } from './judge-env.js'
import { decodeSigned, verifySigned, type Msg, type Signed } from './messages.js'
import { ClaimRejected, reject } from './ruling.js'
import { depthOf } from './tree.js'
import { preLeafOnPath } from './forced-leaf.js'

// What a claim proves its facts against: the defender's (or challenger's)
// signed messages of this dispute and the task's committed roots.

/**
 * A message signed by `who` in this dispute: the signature covers the chain's
 * genesis hash, the task and dispute ids and the author's role (messages.ts),
 * so a message of another chain, task or dispute does not verify.
 */
export function signedBy (env: JudgeEnv, who: 'challenger' | 'defender', s: unknown, what: string): Msg {
  let signed: Signed
  try { signed = decodeSigned(s) } catch (e) { reject('InvalidClaim', `${what}: ${(e as Error).message}`) }
  try {
    const segmented = env.segment !== undefined && env.segment.rootEvery > 1
    return verifySigned(signed, who === 'defender' ? env.defender : env.challenger, env.verify, { genesis: env.genesis, taskId: env.taskId, disputeId: env.disputeId, segmented })
  } catch (e) { reject('InvalidProof', `${what} is not signed by the ${who} in this dispute: ${(e as Error).message}`) }
}

/** The defender's signed commitment to its tape of this step. */
export function tapeCommit (env: JudgeEnv, s: unknown): Extract<Msg, { t: 'commit' }> {
  const m = signedBy(env, 'defender', s, 'tape commitment')
  if (m.t !== 'commit' || m.step !== env.step) reject('InvalidClaim', 'tape commitment is for another step')
  return m
}

/** Entry i of the defender's signed tape. */
export function provenEntry (env: JudgeEnv, commit: Extract<Msg, { t: 'commit' }>, at: { index: unknown, entry: unknown, path: unknown }, what: string): TapeEntry {
  const index = int(at.index, `${what}.index`)
  if (!(at.entry instanceof Uint8Array) || at.entry.length > 32768) reject('InvalidClaim', `${what}: entry bytes`)
  const path = hashes(at.path, `${what}.path`)
  if (!onPath(commit.traceRoot, sha256(at.entry), index, path, commit.depth)) reject('InvalidProof', `${what}: entry ${index} is not in the defender's tape`)
  const e = decodeEntry(at.entry)
  if (e === undefined || e.index !== index) reject('InvalidClaim', `${what}: malformed entry`)
  return e
}

/**
 * State root `which` proven against the committed roots. As a pre-state
 * (`as` 'pre': what a step reads) a forced error's marked leaf stands for its
 * preimage, the honest state the solver continued from (forced-leaf.ts); as a
 * post-state it does not (that difference is the forced error).
 */
export function stateLeafProven (env: StepEnv, which: number, root: unknown, path: unknown, as: 'pre' | 'post'): Uint8Array {
  const r = h32(root, 'state root')
  if (env.seg !== undefined) {
    // inside a segment the roots are the defender's signed ones, tied to the committed ends
    const list = env.seg.roots
    if (list === undefined) reject('InvalidClaim', 'a segment dispute\'s claim carries the defender\'s signed segment')
    const k = which - env.seg.first
    if (k < 0 || k >= list.length) reject('InvalidClaim', `state ${which} is outside the disputed segment`)
    if (!bytesEqual(list[k], r)) reject('InvalidProof', `state root ${which} is not the one the defender signed in its segment`)
    return r
  }
  // the depth is the chain's, not the claimant's: a shorter path would pass an inner node off as a state root
  const m = env.rootEvery ?? 1
  const onLeaf = (leaf: number, depth: number) => (x: Uint8Array): boolean => onPath(env.proofRoot, x, leaf, hashes(path, 'state root path'), depth)
  const proven = (on: (x: Uint8Array) => boolean): boolean => as === 'pre' ? preLeafOnPath(r, on) : on(r)
  if (m === 1) {
    if (!proven(onLeaf(which, depthOf(env.stepCount + 1)))) reject('InvalidProof', `state root ${which} is not leaf ${which} of the committed proof_root`)
    return r
  }
  // a root every m steps: only committed states are leaves, state s is leaf s / m
  if (!isCommittedStep(which, env.stepCount, m)) reject('InvalidClaim', `state ${which} is not committed (a root every ${m} steps)`)
  const leaf = leafOfStep(which, env.stepCount, m)
  if (!proven(onLeaf(leaf, proofDepth(env.stepCount, m)))) reject('InvalidProof', `state root ${which} is not leaf ${leaf} of the committed proof_root`)
  return r
}

/** Bound on the state the chain recomputes for a step-0 badOpen (4 Mi float32 elements: 16 MiB). */
export const MAX_INIT_RECOMPUTE = 4 * 1024 * 1024

/** The program's initial state root as the chain recomputes it for a step-0 badOpen; a ClaimRejected when it cannot. */
function chainInitialRoot (program: unknown, programHash: Uint8Array): Uint8Array {
  try {
    const p = programOf(program, programHash)
    if (initLayout(p).reduce((n, t) => n + sizeOf(t.shape), 0) > MAX_INIT_RECOMPUTE) reject('UnsupportedKernel', 'initial state too large to recompute on chain')
    return initialStateRoot(p)
  } catch (e) {
    if (e instanceof ClaimRejected) throw e
    if (e instanceof InitClaimRejected) reject(e.reason === 'UnsupportedInitializer' ? 'UnsupportedKernel' : e.reason, `badOpen at step 0: ${e.message}`)
    reject('UnsupportedKernel', `badOpen at step 0: ${(e as Error).message}`)
  }
}

/** A step-0 badOpen stands only if the committed state 0 is the program's initial state, recomputed whole. */
export function checkInitialRoot (env: JudgeEnv, program: unknown, pre: Uint8Array): void {
  const root = chainInitialRoot(program, env.programHash)
  if (!bytesEqual(root, pre)) reject('InvalidClaim', 'badOpen at step 0: the committed state 0 is not the program\'s initial state')
}

/**
 * Whether a step-0 badOpen can stand at all: the chain recomputes the program's initial state
 * (element-addressable initializers, at most MAX_INIT_RECOMPUTE elements). When it cannot, the
 * defender plays on instead: every claim is judged against the committed state 0, not against
 * the pre-state the challenger's opening names, so an honest tape still wins.
 */
export function initialRootCheckable (program: Uint8Array | undefined): boolean {
  if (program === undefined) return false
  try {
    chainInitialRoot(program, sha256(program))
    return true
  } catch (e) {
    if (e instanceof ClaimRejected) return false
    throw e
  }
}
