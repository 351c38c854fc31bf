import type { ErrorSpec, StorageSpec } from './spec-types.js'

// Segments' part of the Arbitration pallet interface (segments.ts implements
// it; spec.ts splices the list into the pallet): a task whose program commits
// a state root every m > 1 steps (docs/disputes.md "Segments"). No call of its
// own: open_dispute's disputed_step names a segment of such a task.

export const SEGMENT_STORAGE: StorageSpec[] = [
  {
    name: 'TaskRootEvery',
    key: 'u64',
    hasher: 'Twox64Concat',
    type: 'u32',
    modifier: 'Optional',
    docs: 'Per task whose program names rootEvery m > 1: m. Its proof_root has ⌈step_count / m⌉ + 1 leaves (the states after steps min(j·m, step_count)), its disputes name a segment j and start with the defender\'s signed roots inside it. Absent: a root after every step.'
  }
]

export const SEGMENT_ERRORS: ErrorSpec[] = [
  {
    name: 'RootEveryTooLarge',
    docs: 'submit_task: the program commits a state root every m steps with m above this chain\'s max_root_every (1: every task commits a root after every step). A larger m makes a dispute\'s defender re-run, and a verifier replay, up to m steps per segment.'
  }
]
