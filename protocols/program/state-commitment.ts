import { ProgramError } from './topology.js'

// Which commitment a program's per-step state roots use (docs/training.md
// "Chunked roots: design"). Absent: every state tensor under its row + column
// commitment (protocols/commit/tensor.ts), as every program before the field.
// 'chunked': under its chunked commitment (protocols/commit/chunked.ts), the
// tape linking the two schemes by @StateRead / @StateWrite entries
// (protocols/tape/state-io.ts). The field is part of the program, so its hash
// binds the scheme: a solver cannot switch it after submission.

export const CHUNKED_STATE = 'chunked'
/** The values the program field may take (absent: row + column). */
export type StateCommitment = typeof CHUNKED_STATE

/**
 * Whether this build's chain and nodes judge and serve the chunked scheme end
 * to end (the dispute game's chunks answer and walk, the availability serve
 * of chunks, the trainer's and verifiers' chunked roots). Until then a chunked
 * program is not admissible (admissible.ts): a task whose disputes the chain
 * cannot rule on would pay a cheating solver by the challenger's timeout.
 */
export const CHUNKED_STATE_JUDGED = true

/** Validates the program field `stateCommitment` (undefined: absent, row + column). */
export function validateStateCommitment (v: unknown): StateCommitment | undefined {
  if (v === undefined) return undefined
  if (v !== CHUNKED_STATE) throw new ProgramError(`stateCommitment must be "${CHUNKED_STATE}" or absent (row + column), got ${JSON.stringify(v)}`)
  return v
}

/** Whether the program's state roots commit its state tensors under chunked commitments. */
export function stateIsChunked (p: { stateCommitment?: unknown }): boolean {
  return p.stateCommitment === CHUNKED_STATE
}

/** The scheme's name for people (task check). */
export function stateCommitmentName (p: { stateCommitment?: unknown }): string {
  return stateIsChunked(p) ? 'chunked (4 KiB chunks)' : 'row + column'
}
