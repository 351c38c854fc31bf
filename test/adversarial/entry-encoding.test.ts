import { u8aToHex } from '@polkadot/util'
import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { decodeEntry } from '../../protocols/dispute/index.js'
import { encodeEntryBytes } from '../../protocols/dispute/player.js'
import type { TapeEntry } from '../../protocols/tape/tape.js'
import { STAKE, nodeOf, tamperOp, type Run, type Side } from '../unit/dispute/fixture.js'
import { adjudicateOrTimeout, challengerClaim, dispute, honestReply, mlpRun, opened, worth } from './setup.js'

// A tape leaf is sha256 of the entry's bytes, but the challenger compares
// entries by what they decode to. A cheater signs a tape whose first entry
// carries one field more than an entry has (a key the skeleton does not read:
// on the entry, an input or an output), or the same content in another CBOR
// encoding: the leaf differs from the challenger's, the walk ends there, and
// the decoded entry matches the skeleton and every commitment. The challenger
// had no claim ('differs in no commitment we can dispute') and lost at the
// deadline while the cheater's wrong step (a weight gradient's MatMul) stood. Now an
// entry is well formed only in its canonical encoding (decodeEntry re-encodes
// exactly the fields an entry has): anything else is a malformed entry, which
// a `skeleton` claim rules against the defender.

let run: Run
beforeAll(async () => { run = await mlpRun() }, 120_000)

/** The real cheat at the last BatchMatMul (a weight gradient), with entry 0 given an extra field by `extra`. */
function padded (extra: (e: TapeEntry) => TapeEntry): Side {
  const at = run.entries.map(e => e.kernel).lastIndexOf('BatchMatMul')
  expect(at).toBeGreaterThan(0)
  const cheat = tamperOp(run, at)
  return { ...cheat, entries: cheat.entries.map((e, i) => i === 0 ? extra(e) : e) }
}

describe('a cheater signs a tape whose first entry is encoded otherwise than canonically', () => {
  const cases: Array<[string, (e: TapeEntry) => TapeEntry]> = [
    ['an extra key on the entry', e => ({ ...e, note: 1 }) as TapeEntry],
    ['an extra key on an output', e => ({ ...e, outputs: e.outputs.map((o, k) => k === 0 ? { ...o, note: 'x' } : o) }) as TapeEntry],
    ['an inline value on an input that is no constant', e => ({ ...e, inputs: e.inputs.map((x, k) => k === 0 ? { ...x, value: [1] } : x) }) as TapeEntry]
  ]
  for (const [what, extra] of cases) {
    it(`${what}: not a well-formed entry; the challenger's skeleton claim wins and the cheater is slashed`, async () => {
      const cheat = padded(extra)
      // the premise: another leaf, the same decoded content as far as the skeleton and the commitments go
      expect(u8aToHex(encodeEntryBytes(cheat.entries[0]))).not.toBe(u8aToHex(encodeEntryBytes(run.entries[0])))
      const { h, g } = await opened(run, cheat)
      const daveBefore = worth(h, 'Dave')
      const claim = challengerClaim(g, g.D.commit(), honestReply(g))
      adjudicateOrTimeout(h, claim)
      expect(dispute(h).status).toBe('ChallengerWon')
      expect(claim?.kind).toBe('skeleton')
      expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
      expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
      expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
    }, 120_000)
  }

  it('every entry of an honest tape is canonical', () => {
    for (const e of run.entries) expect(decodeEntry(encodeEntryBytes(e))).toEqual(e)
  })
})
