import type { CommitScheme } from '../commit/scheme.js'
import { stateIsChunked } from './state-commitment.js'

/** The commitment a program's state roots are under (protocols/commit/scheme.ts): its field `stateCommitment`. */
export function commitSchemeOf (p: { stateCommitment?: unknown }): CommitScheme {
  return stateIsChunked(p) ? 'chunked' : 'rowcol'
}
