import { bytesEqual, sha256 } from '../commit/merkle.js'
import { committedStep, proofDepth, segmentCount, segmentLength } from '../pol/segments.js'
import type { Claim, SegmentProof } from './claim-kinds.js'
import { h32, hashes, int, onPath } from './claim-fields.js'
import { signedBy } from './claim-proofs.js'
import type { JudgeEnv, SegmentView, StepEnv } from './judge-env.js'
import type { Signed } from './messages.js'
import { judgeStep } from './judge-step.js'
import { reject, type Ruling } from './ruling.js'
import { preLeafOnPath } from './forced-leaf.js'

// A segment dispute's claim (a root every m > 1 steps): which step inside the
// segment it is about, and the defender's signed roots it reads states from.

/** The defender's signed roots of segment j with the committed leaves around it: [leaf j, r_1 … r_{L−1}, leaf j+1]. */
function segmentRoots (env: JudgeEnv, seg: { j: number, rootEvery: number }, length: number, p: unknown): Uint8Array[] {
  const q = p as SegmentProof
  if (typeof q !== 'object' || q === null) reject('InvalidClaim', 'seg must be a map')
  const m = signedBy(env, 'defender', q.msg, 'segment')
  if (m.t !== 'segment' || m.seq !== 0 || m.j !== seg.j) reject('InvalidClaim', 'not the defender\'s segment of this dispute')
  if (m.roots.length !== length - 1) reject('InvalidClaim', `segment ${seg.j} has ${length - 1} roots inside it, the message ${m.roots.length}`)
  const depth = proofDepth(env.stepCount, seg.rootEvery)
  const start = h32(q.start, 'seg.start'); const end = h32(q.end, 'seg.end')
  // the segment's start is its first step's pre-state: a forced error's marked leaf stands for its preimage
  const startPath = hashes(q.startPath, 'seg.startPath')
  if (!preLeafOnPath(start, x => onPath(env.proofRoot, x, seg.j, startPath, depth))) reject('InvalidProof', `seg.start is not leaf ${seg.j} of proof_root`)
  if (!onPath(env.proofRoot, end, seg.j + 1, hashes(q.endPath, 'seg.endPath'), depth)) reject('InvalidProof', `seg.end is not leaf ${seg.j + 1} of proof_root`)
  return [start, ...m.roots, end]
}

/** The step of the defender's signed commit a claim carries, which must lie inside the segment. */
function commitStepIn (env: JudgeEnv, s: unknown, first: number, length: number): number {
  const m = signedBy(env, 'defender', s, 'tape commitment')
  if (m.t !== 'commit') reject('InvalidClaim', 'not a tape commitment')
  if (m.step < first || m.step >= first + length) reject('InvalidClaim', `the commitment is for step ${m.step}, outside the disputed segment`)
  return m.step
}

/**
 * A segment dispute's claim: the step it is about comes from a signed message
 * (the defender's commit, or for badOpen the challenger's opening), the pre-
 * and post-state roots from the defender's signed segment, and then the claim
 * is judged exactly as in a one-step dispute at that step.
 */
export function judgeSegment (env: JudgeEnv, seg: { j: number, rootEvery: number }, c: Claim): Ruling {
  // a diverged proof's segments end at its last leaf, before the diverged step: they are ordinary
  if (seg.j >= segmentCount(env.stepCount, seg.rootEvery)) reject('InvalidClaim', `no segment ${seg.j} in this proof`)
  const first = committedStep(seg.j, env.stepCount, seg.rootEvery)
  const length = segmentLength(seg.j, env.stepCount, seg.rootEvery)
  const view: SegmentView = { first, length, roots: c.seg === undefined ? undefined : segmentRoots(env, seg, length, c.seg) }
  const at = (step: number): StepEnv => ({ ...env, step, seg: view })
  let step: number
  switch (c.kind) {
    case 'badOpen': {
      if (env.caller !== 'defender') reject('InvalidClaim', 'only the defender submits badOpen')
      const m = signedBy(env, 'challenger', c.open, 'opening')
      if (m.t !== 'open' || m.seq !== 1) reject('InvalidClaim', 'not the opening of this dispute')
      if (c.other !== undefined) {
        // one opening per dispute: the defender commits to one step, and a second signed opening of another would
        // let the challenger force it to sign a second tape whose tree contradicts the first (a `lie` it did not tell)
        const o = signedBy(env, 'challenger', c.other, 'second opening')
        if (o.t !== 'open' || o.seq !== 1) reject('InvalidClaim', 'the second message is not an opening of this dispute')
        // two openings of one step differ too (another pre or post root): the defender's commit answers one of them only
        if (bytesEqual((c.open as Signed).m, (c.other as Signed).m)) reject('InvalidClaim', 'the two openings are one message')
        return { winner: 'defender', kind: 'badOpen', reason: `the challenger signed two openings (steps ${m.step} and ${o.step}) of one segment`, step: m.step }
      }
      if (m.step < first || m.step >= first + length) return { winner: 'defender', kind: 'badOpen', reason: 'the opening names a step outside the segment', step: first }
      // the roots are the defender's word: the opening is judged against the segment it answered, never
      // against a second list the defender signed after it with another root at the opened pre-state
      if (c.seg === undefined || !bytesEqual(m.prev, sha256((c.seg.msg as Signed).m))) reject('InvalidClaim', 'badOpen: the opening does not follow the segment the claim carries')
      step = m.step
      break
    }
    case 'init':
      if (seg.j !== 0) reject('InvalidClaim', 'an init claim ends a dispute of segment 0 only')
      step = 0
      break
    case 'lie': {
      step = first
      if (!Array.isArray(c.msgs)) reject('InvalidClaim', 'lie: 1 to 4 messages')
      // the tape facts of two steps would conflict without a lie: one step per claim
      const steps = new Set<number>()
      for (const x of c.msgs) {
        const m = signedBy(env, 'defender', x, 'lie: message')
        if (m.t === 'commit') steps.add(commitStepIn(env, x, first, length))
        if (m.t === 'segment' && m.j !== seg.j) reject('InvalidClaim', 'lie: a segment of another dispute')
      }
      if (steps.size > 1) reject('InvalidClaim', 'lie: commitments for two steps')
      if (steps.size === 1) step = [...steps][0]
      break
    }
    case 'nan':
      if (c.op !== undefined) step = commitStepIn(env, (c.op as { commit?: unknown }).commit, first, length)
      else {
        const i = int(c.state?.index, 'nan.state.index')
        if (i < first || i > first + length) reject('InvalidClaim', 'nan: the state must be inside the disputed segment')
        // the transition that produced state i (the segment's first state: its first transition reads it)
        step = i === first ? first : i - 1
      }
      break
    default:
      step = commitStepIn(env, (c as { commit?: unknown }).commit, first, length)
  }
  return { ...judgeStep(at(step), c), step }
}
