// State roots every m steps (docs/disputes.md "Segments"). A proof of N steps
// with root spacing m commits the roots of steps c_j = min(j·m, N), j = 0 …
// ⌈N / m⌉: leaf j of proof_root is the state after step c_j. Segment j is the
// L = c_{j+1} − c_j ≤ m transitions between leaf j and leaf j + 1. At m = 1
// every step is a leaf and leaf j is step j, exactly the per-step proof.

export const MAX_ROOT_EVERY = 64

/**
 * The spacing `task new` and the devnet's built-in tasks name unless told
 * otherwise: hashing one state in 8 cuts the proof's cost on one core to a
 * fraction of m = 1's (docs/benchmarks.md "Training speed against PyTorch"),
 * and a dispute still narrows through a segment of ≤ 8 steps to one step
 * (docs/disputes.md "Segments").
 */
export const DEFAULT_ROOT_EVERY = 8

/**
 * The root spacing of a task whose author named none: DEFAULT_ROOT_EVERY,
 * unless the task is shorter (a checkpoint spacing is a multiple of m and at
 * most the steps) or its named checkpoint spacing is not a multiple of it;
 * then a root after every step.
 */
export function defaultRootEvery (steps: number, checkpointEvery?: number): number {
  check(steps, 1)
  const m = DEFAULT_ROOT_EVERY
  if (steps < m || (checkpointEvery !== undefined && checkpointEvery % m !== 0)) return 1
  return m
}

function check (steps: number, m: number): void {
  if (!Number.isInteger(steps) || steps < 0) throw new RangeError(`steps must be a non-negative integer, not ${steps}`)
  if (!Number.isInteger(m) || m < 1 || m > MAX_ROOT_EVERY) throw new RangeError(`rootEvery must be an integer in [1, ${MAX_ROOT_EVERY}], not ${m}`)
}

/** ⌈N / m⌉ + 1 committed roots. */
export function leafCount (steps: number, m: number): number {
  check(steps, m)
  return Math.ceil(steps / m) + 1
}

/** The step whose post-state leaf j commits: min(j·m, N). */
export function committedStep (j: number, steps: number, m: number): number {
  const n = leafCount(steps, m)
  if (!Number.isInteger(j) || j < 0 || j >= n) throw new RangeError(`leaf ${j} outside 0 … ${n - 1}`)
  return Math.min(j * m, steps)
}

/** Whether the state after step s is a committed leaf (s a multiple of m, or the last). */
export function isCommittedStep (s: number, steps: number, m: number): boolean {
  check(steps, m)
  return Number.isInteger(s) && s >= 0 && s <= steps && (s % m === 0 || s === steps)
}

/** The leaf that commits the state after step s; s must be committed. */
export function leafOfStep (s: number, steps: number, m: number): number {
  if (!isCommittedStep(s, steps, m)) throw new RangeError(`the state after step ${s} is not committed (roots every ${m} of ${steps} steps)`)
  return Math.ceil(s / m)
}

/** Number of segments: transitions between consecutive leaves. */
export function segmentCount (steps: number, m: number): number {
  return leafCount(steps, m) - 1
}

/** L = c_{j+1} − c_j: the transitions of segment j (1 … m). */
export function segmentLength (j: number, steps: number, m: number): number {
  if (!Number.isInteger(j) || j < 0 || j >= segmentCount(steps, m)) throw new RangeError(`segment ${j} outside 0 … ${segmentCount(steps, m) - 1}`)
  return committedStep(j + 1, steps, m) - committedStep(j, steps, m)
}

/** The segment holding transition `step` (from state step to step + 1) and its place i in it. */
export function segmentOfStep (step: number, steps: number, m: number): { j: number, i: number } {
  check(steps, m)
  if (!Number.isInteger(step) || step < 0 || step >= steps) throw new RangeError(`step ${step} outside 0 … ${steps - 1}`)
  const j = Math.floor(step / m)
  return { j, i: step - j * m }
}

/** The committed steps in leaf order: 0, m, 2m, …, N. */
export function committedSteps (steps: number, m: number): number[] {
  return Array.from({ length: leafCount(steps, m) }, (_, j) => committedStep(j, steps, m))
}

/** The Merkle path length of every leaf of proof_root: ⌈log2(⌈N / m⌉ + 1)⌉, a depth the chain computes from N and m. */
export function proofDepth (steps: number, m: number): number {
  const n = leafCount(steps, m)
  return n <= 1 ? 0 : Math.ceil(Math.log2(n))
}

/**
 * A checkpoint spacing near `every` whose checkpoints are committed states: a
 * multiple of m, rounded up, and at least 2m when m > 1 and the steps allow,
 * so that a committed leaf between two checkpoints can hold a forced error
 * (a checkpoint is never marked: protocols/dispute/forced-error.ts
 * forcedErrorRoom), but not past the last multiple of m within the steps (a
 * checkpoint spacing over the steps is refused by the chain).
 */
export function committedSpacing (every: number, steps: number, m: number): number {
  check(steps, m)
  const least = m > 1 ? 2 * m : m
  return Math.max(m, Math.min(Math.max(least, Math.ceil(every / m) * m), Math.floor(steps / m) * m))
}
