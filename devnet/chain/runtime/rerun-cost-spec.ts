import type { StorageSpec } from './spec-types.js'

// The re-run price's part of the Arbitration pallet interface (rerun-cost.ts
// implements it; spec.ts splices the list in). No calls: submit_task stores it.

export const RERUN_COST_STORAGE: StorageSpec[] = [
  {
    name: 'TaskStepCost',
    key: 'u64',
    hasher: 'Twox64Concat',
    type: 'u64',
    modifier: 'Optional',
    docs: 'Per task: one training step of its program at the network\'s reference speed, in millionths of a block (⌈6 · macs · batch_size · 10^6 / reference_flops_per_block⌉, the estimate SolveTimeoutTooShort uses). A re-run of n steps (a dispute\'s tape, a segment, a backing verifier\'s evidence) is granted min(⌈n · solve_timeout / steps⌉, ⌈2 · n · cost / 10^6⌉ + ⌈4 · 10^9 / reference_flops_per_block⌉) blocks: the submitter\'s pace, or twice the steps\' work and an engine start at the reference speed if less. Absent: the submitter\'s pace alone.'
  }
]
