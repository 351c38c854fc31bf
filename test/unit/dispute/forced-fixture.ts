import { u8aToHex } from '@polkadot/util'
import { toHex } from '../../../protocols/commit/merkle.js'
import { stateRoot } from '../../../protocols/commit/state.js'
import type { TensorData } from '../../../protocols/commit/tensor.js'
import { encodeExactness, forcedState, proveExactness } from '../../../protocols/dispute/forced-exact.js'
import type { Run, Side } from './fixture.js'

// Forced errors on a real disputed step (fixture.ts): the honest solver's
// (exactly one element of the post-state changed after an honest step) and a
// cheater's that covers more changes at the same step, with the exactness
// proof each can build for its reveal.

/** The honest post-state tensors of the run's step (its tape's @state values). */
export const honestPost = (run: Run): TensorData[] => run.values[run.values.length - 1].inputs

/** A solver whose tape is honest and whose committed post-state is `post` (and every later state root too). */
export function committing (run: Run, post: TensorData[]): Side & { post: TensorData[] } {
  const root = toHex(stateRoot(post, run.step + 1))
  return {
    entries: run.entries, values: run.values, roots: [...run.roots.slice(0, run.step + 1), root, ...run.roots.slice(run.step + 2).map(() => root)], post
  }
}

/** The honest forced error: element 0 of state tensor 0 set to |v| + 1 after the step. */
export const forcedSide = (run: Run): Side & { post: TensorData[] } => committing(run, forcedState(honestPost(run)))

/** The forced error and more: `cover` edits the forced post-state (another element, another tensor). */
export const coverSide = (run: Run, cover: (post: TensorData[]) => TensorData[]): Side & { post: TensorData[] } =>
  committing(run, cover(forcedState(honestPost(run)).map(t => ({ ...t, values: t.values.slice() }))))

/** The exactness proof a solver committing `side` builds (0x hex): the best it can for a cover. */
export const exactnessOf = (run: Run, side: Side & { post: TensorData[] }): string =>
  u8aToHex(encodeExactness(proveExactness(honestPost(run), side.post, run.step, side.roots)))
