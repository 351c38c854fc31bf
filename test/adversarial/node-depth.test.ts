import { beforeAll, describe, expect, it } from 'vitest'
import { REVEAL_WINDOW } from '../../devnet/chain/runtime/spec.js'
import { verifySigned, type Signed } from '../../protocols/dispute/index.js'
import { signed } from '../helpers/dispute-msgs.js'
import { STAKE, nodeOf, pair, tamperOp, verify, type Run, type Side } from '../unit/dispute/fixture.js'
import { adjudicateOrTimeout, challengerClaim, dispute, force, mlpRun, msgOf, opened, worth } from './setup.js'

// A `nodes` answer states the depth of its tree, and the chain's continuation
// rule reads that depth to decide which query may follow (children above the
// leaves, an entry or a slice at them). A cheater states one level more than
// its committed tape has: at the real leaves the honest challenger asks for the
// entry, the cheater refuses, and the chain refuses to force the query ("above
// the leaves, ask for children"). The challenger was stuck and lost at the
// deadline, the cheat standing. The stated depth contradicts the commit's
// (`depth:tape`, or a tensor tree's from its roots): now the challenger checks
// it on every answer and claims the `lie`.

let run: Run
let cheat: Side
beforeAll(async () => {
  run = await mlpRun()
  cheat = tamperOp(run, run.entries.findIndex(e => e.kernel === 'BatchMatMul'))
}, 120_000)

describe('a cheater states another depth in its node answers than its commit', () => {
  it('the challenger claims the lie and wins; the cheater is slashed', async () => {
    const { h, g } = await opened(run, cheat)
    const daveBefore = worth(h, 'Dave')
    const lying = (q: Signed): Signed => {
      const r = g.D.respond(verifySigned(q, pair('Dave').publicKey, verify, g.ctx), q).reply!
      const m = msgOf(r)
      if (m.t !== 'nodes' || m.tree.e !== -1) return r
      return signed('Bob', g.ctx, { t: 'nodes', d: 0, tree: m.tree, level: m.level, index: m.index, depth: m.depth + 1, node: m.node, left: m.left, right: m.right }, q)
    }
    let d: Signed = g.D.commit()
    const claim = challengerClaim(g, d, q => (d = lying(q)), q => {
      const m = msgOf(q)
      if (m.t !== 'query' || m.want !== 'entry') return false
      // the cheater refuses the entry; forced on chain, the query is not a continuation of its answer
      expect(force(h, 'Dave', d, q)).toBe('Arbitration.NotAnAnswer')
      return true
    })
    adjudicateOrTimeout(h, claim)
    expect(dispute(h).status).toBe('ChallengerWon')
    expect(claim?.kind).toBe('lie')
    expect(h.advance(REVEAL_WINDOW + 1)).toContain('Arbitration.SolverPenalized')
    expect(nodeOf(h, 'Bob').stake).toBeLessThan(STAKE)
    expect(worth(h, 'Dave')).toBeGreaterThan(daveBefore)
  }, 120_000)
})
