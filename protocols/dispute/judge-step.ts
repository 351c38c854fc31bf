import { ZERO_HASH, bytesEqual, fromHex, merkleRoot, sha256, sizedRoot, toHex } from '../commit/merkle.js'
import { stepLeaf } from '../commit/state.js'
import { isStateConversion } from '../tape/state-io.js'
import { STATE_PSEUDO_KERNEL } from '../tape/tape.js'
import type { Claim, EntryAt } from './claim-kinds.js'
import { h32, hashes, int, onPath, tensorOf } from './claim-fields.js'
import { checkInitialRoot, provenEntry, signedBy, stateLeafProven, tapeCommit } from './claim-proofs.js'
import { decodeEntry } from './entry.js'
import { samePre } from './forced-leaf.js'
import { InitClaimRejected, judgeInitClaim } from './init-claim.js'
import { afterEnd, judgeData, judgeElement } from './judge-element.js'
import type { StepEnv } from './judge-env.js'
import { judgeNan } from './judge-nan.js'
import { judgeConversionElement } from './judge-state-io.js'
import { conflictOf, factsOf } from './facts.js'
import type { Msg } from './messages.js'
import { runPosition } from './nan.js'
import { reject, type Ruling } from './ruling.js'
import { skeletonLeaf } from './skeleton.js'
import { depthOf } from './tree.js'

// The ruling on a claim about one step (in a segment dispute, the step inside
// the segment judge-segment.ts found): who may submit which kind, and the
// facts of the tape's structure, provenance and post-state; element, data and
// NaN facts are judge-element.ts's and judge-nan.ts's.

export function judgeStep (env: StepEnv, c: Claim): Ruling {
  const defenderLoses = (reason: string): Ruling => ({ winner: 'challenger', kind: c.kind, reason })
  const challengerLoses = (reason: string): Ruling => ({ winner: 'defender', kind: c.kind, reason })
  if (c.kind === 'badOpen') {
    if (env.caller !== 'defender') reject('InvalidClaim', 'only the defender submits badOpen')
    const m = signedBy(env, 'challenger', c.open, 'opening')
    if (m.t !== 'open') reject('InvalidClaim', 'not the opening of this dispute')
    if (m.step !== env.step) return defenderWins('the opening names another step')
    const pre = stateLeafProven(env, env.step, c.pre, c.prePath, 'pre')
    if (samePre(pre, m.pre)) reject('InvalidClaim', 'the challenger agreed with the committed pre-state')
    // there is no earlier step to dispute than 0: the committed state 0 must be the program's
    if (env.step === 0) checkInitialRoot(env, c.program, pre)
    return defenderWins('the challenger disputes the pre-state: it should have disputed an earlier step')
  }
  if (c.kind === 'init') {
    if (env.caller !== 'challenger') reject('InvalidClaim', 'only the challenger submits an init claim')
    if (env.step !== 0) reject('InvalidClaim', 'an init claim ends a dispute of step 0 only (else: challenge_initial_state)')
    try {
      const rootEvery = env.segment?.rootEvery ?? env.rootEvery
      const r = judgeInitClaim({ programHash: env.programHash, proofRoot: env.proofRoot, stepCount: env.stepCount, rootEvery }, c)
      return { winner: r.winner === 'challenger' ? 'challenger' : 'defender', kind: 'init', reason: r.reason }
    } catch (e) {
      if (e instanceof InitClaimRejected) reject(e.reason === 'UnsupportedInitializer' ? 'UnsupportedKernel' : e.reason, e.message)
      throw e
    }
  }
  if (env.caller !== 'challenger') reject('InvalidClaim', `only the challenger submits a ${String(c.kind)} claim`)
  switch (c.kind) {
    case 'lie': {
      if (!Array.isArray(c.msgs) || c.msgs.length < 1 || c.msgs.length > 4) reject('InvalidClaim', 'lie: 1 to 4 messages')
      const msgs: Msg[] = c.msgs.map((x, i) => {
        const m = signedBy(env, 'defender', x, `lie: message ${i}`)
        if (m.t === 'commit' && m.step !== env.step) reject('InvalidClaim', 'lie: commitment for another step')
        return m
      })
      const { facts, selfContradiction } = factsOf(msgs)
      if (selfContradiction !== undefined) return defenderLoses(selfContradiction)
      const conflict = conflictOf(facts)
      if (conflict === undefined) reject('InvalidClaim', 'lie: the messages do not contradict each other')
      return defenderLoses(`contradicting statements at ${conflict}`)
    }
    case 'skeleton': {
      const commit = tapeCommit(env, c.commit)
      const index = int(c.index, 'index')
      const skelPath = hashes(c.skelPath, 'skelPath')
      const skelLeaf = h32(c.skelLeaf, 'skelLeaf')
      const skelCount = int(c.skelCount, 'skelCount')
      const skelInner = h32(c.skelInner, 'skelInner')
      if (skelCount === 0 || !bytesEqual(sizedRoot(skelCount, skelInner), env.skeletonRoot)) reject('InvalidProof', 'skelCount/skelInner do not open the task\'s skeleton_root')
      const skelDepth = depthOf(skelCount)
      if (!onPath(skelInner, skelLeaf, index, skelPath, skelDepth)) reject('InvalidProof', `skeleton leaf ${index} is not in the task's skeleton_root`)
      // the skeleton fixes the number of entries, hence the tape tree's depth
      if (skelDepth !== commit.depth) return defenderLoses(`the defender's tape has depth ${commit.depth}, the program's ${skelDepth}`)
      const path = hashes(c.path, 'path')
      let dSkel: Uint8Array | undefined
      if (c.entry !== undefined) {
        if (!(c.entry instanceof Uint8Array) || c.entry.length > 32768) reject('InvalidClaim', 'skeleton: entry bytes')
        if (!onPath(commit.traceRoot, sha256(c.entry), index, path, commit.depth)) reject('InvalidProof', `skeleton: entry ${index} is not in the defender's tape`)
        const e = decodeEntry(c.entry)
        dSkel = e === undefined || e.index !== index ? undefined : skeletonLeaf(e)
      } else {
        if (!onPath(commit.traceRoot, ZERO_HASH, index, path, commit.depth)) reject('InvalidProof', 'skeleton: the defender has no empty leaf there')
        dSkel = ZERO_HASH
      }
      if (dSkel === undefined) return defenderLoses(`entry ${index} of the defender's tape is malformed`)
      return bytesEqual(dSkel, skelLeaf) ? challengerLoses(`entry ${index} matches the skeleton`) : defenderLoses(`entry ${index} differs from the committed skeleton`)
    }
    case 'input': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'input')
      if (runPosition(env, e.index) === 'after') return challengerLoses(afterEnd(env, e.index))
      const k = int(c.k, 'k')
      const inp = e.inputs[k]
      if (inp === undefined) reject('InvalidClaim', `entry ${e.index} has no input ${k}`)
      const declared = fromHex(inp.commitment)
      const prov = c.prov as Record<string, unknown>
      if (inp.ref.kind === 'state') {
        const p = prov as { t: unknown, tensor: unknown, tensorPath: unknown, pre: unknown, prePath: unknown }
        if (int(p.t, 't') !== inp.ref.index) reject('InvalidClaim', 'input: provenance names another state tensor')
        const pre = stateLeafProven(env, env.step, p.pre, p.prePath, 'pre')
        const tensor = tensorOf(p.tensor)
        if (!onPath(pre, tensor, inp.ref.index, hashes(p.tensorPath, 'tensorPath'))) reject('InvalidProof', `input: tensor ${inp.ref.index} is not in the pre-state root`)
        return bytesEqual(tensor, declared) ? challengerLoses(`input ${k} of entry ${e.index} is state tensor ${inp.ref.index}`) : defenderLoses(`input ${k} of entry ${e.index} is not state tensor ${inp.ref.index} of the pre-state`)
      }
      if (inp.ref.kind === 'op') {
        const j = provenEntry(env, commit, (prov as { j: EntryAt }).j ?? {}, 'input.j')
        if (j.index !== inp.ref.index) reject('InvalidClaim', 'input: provenance names another entry')
        const out = j.outputs[inp.ref.output]
        if (out === undefined) return defenderLoses(`entry ${j.index} has no output ${inp.ref.output}`)
        return bytesEqual(fromHex(out.commitment), declared) ? challengerLoses(`input ${k} of entry ${e.index} is output ${inp.ref.output} of entry ${j.index}`) : defenderLoses(`input ${k} of entry ${e.index} is not what entry ${j.index} output`)
      }
      reject('InvalidClaim', `input claims are for state and op inputs (this one is ${inp.ref.kind}: use a ${inp.ref.kind === 'data' ? 'data' : 'skeleton'} claim)`)
    }

    case 'state': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'state')
      if (e.kernel !== STATE_PSEUDO_KERNEL) reject('InvalidClaim', `entry ${e.index} is not the ${STATE_PSEUDO_KERNEL} entry`)
      // the run ends at its divergence point, an op before the @state entry: at or past it, the step completed without one
      const at = runPosition(env, e.index)
      if (at === 'before' || at === 'at') return defenderLoses(`the divergence point (entry ${env.divergence?.entry ?? -1}) is not before the step's ${STATE_PSEUDO_KERNEL} entry ${e.index}`)
      // a diverged proof's last step has no post-state: the run ended inside it
      if (env.step >= env.stepCount) return challengerLoses('the run diverged in this step: it has no post-state')
      const post = stateLeafProven(env, env.step + 1, c.post, c.postPath, 'post')
      const recomputed = merkleRoot([...e.inputs.map(i => fromHex(i.commitment)), stepLeaf(env.step + 1)])
      return bytesEqual(recomputed, post) ? challengerLoses('the @state entry hashes to the committed post-state') : defenderLoses(`the @state entry hashes to ${toHex(recomputed).slice(0, 16)}…, not the committed post-state root`)
    }
    case 'element': return judgeElement(env, c, defenderLoses, challengerLoses)
    case 'convert': {
      const commit = tapeCommit(env, c.commit)
      const e = provenEntry(env, commit, c, 'convert')
      // an ordinary op is no conversion whatever the run's position: refused before any rule below rules on it
      if (!isStateConversion(e.kernel)) reject('InvalidClaim', `entry ${e.index} (${e.kernel}) is not a state conversion`)
      const at = runPosition(env, e.index)
      if (at === 'after') return challengerLoses(afterEnd(env, e.index))
      // an identity of NaN-free state makes no NaN: a divergence point there is bogus
      if (at === 'at') return defenderLoses(`the divergence point (entry ${e.index}) is a state conversion, which makes no NaN`)
      const r = judgeConversionElement(e, c)
      return r.winner === 'challenger' ? defenderLoses(r.reason) : challengerLoses(r.reason)
    }
    case 'data': return judgeData(env, c, defenderLoses, challengerLoses)
    case 'nan': return judgeNan(env, c, defenderLoses, challengerLoses)
    default: reject('InvalidClaim', `unknown claim kind ${String((c as { kind?: unknown }).kind)}`)
  }
  function defenderWins (reason: string): Ruling { return { winner: 'defender', kind: c.kind, reason } }
}
