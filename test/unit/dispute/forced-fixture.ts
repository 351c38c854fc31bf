import { u8aToHex } from '@polkadot/util'
import { fromHex, toHex } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import type { TensorData } from '../../../protocols/commit/tensor.js'
import { encodeForcedLeafProof, forcedLeaf, proveForcedLeaf } from '../../../protocols/dispute/forced-leaf.js'
import type { Run, Side } from './fixture.js'

// Forced errors on a real disputed step (fixture.ts): the honest solver's
// (the step trained honestly, leaf step + 1 committed as the forced mark of
// its root, training continued from the honest state) and a cheater's that
// changes the state at the same step and marks the changed one, with the
// reveal's proof each can build.

/** The honest post-state tensors of the run's step (its tape's @state values). */
export const honestPost = (run: Run): TensorData[] => run.values[run.values.length - 1].inputs

const mark = (hex: string): string => toHex(forcedLeaf(fromHex(hex)))

/** The honest forced error: leaf step + 1 is forcedLeaf of the honest root; every other root is the honest run's. */
export const forcedSide = (run: Run): Side & { post: TensorData[] } => ({
  entries: run.entries, values: run.values, roots: run.roots.map((r, i) => i === run.step + 1 ? mark(r) : r), post: honestPost(run)
})

/** A cheater that changes the post-state to `cover(honest)`, marks its root and continues from it (every later root the same). */
export const coverSide = (run: Run, cover: (post: TensorData[]) => TensorData[]): Side & { post: TensorData[] } => {
  const post = cover(honestPost(run).map(t => ({ ...t, values: t.values.slice() })))
  const root = toHex(stateRoot(post, run.step + 1))
  const roots = [...run.roots.slice(0, run.step + 1), mark(root), ...run.roots.slice(run.step + 2).map(() => root)]
  return { entries: run.entries, values: run.values, roots, post }
}

/** The reveal's proof (0x hex) for a solver committing `roots`: the path of leaf step + 1 (one root per step). */
export const revealOf = (run: Run, side: Pick<Side, 'roots'>, step = run.step): string =>
  u8aToHex(encodeForcedLeafProof(proveForcedLeaf(side.roots, step, side.roots.length - 1)))
