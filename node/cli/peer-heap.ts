import { setFlagsFromString } from 'node:v8'
import { enableHeapGrowthHolds } from '../heap-growth.js'

/**
 * V8 heap settings for a long-running peer (`proofswarm join` / `bootstrap`),
 * applied by the CLI entry (main.ts) before libp2p loads. Both flags are read
 * each time V8 sizes a space, so setting them at run time takes effect
 * (--max-semi-space-size or --initial-heap-size would need a re-exec, since V8
 * reads them once at start). Training runs in child processes with V8's defaults.
 *
 * - Young generation kept at its initial 1 MiB semi-spaces instead of growing
 *   to 2 × 16 MiB: a peer allocates little that lives long (gossip RPCs,
 *   stream buffers); the grown young generation was 25–30 MiB of RSS per peer
 *   for no measurable CPU saving.
 * - Old generation grown 3× its live size after a full GC instead of V8's
 *   ~1.3× (with `--optimize-for-size`), but only while the peer moves
 *   checkpoints (node/heap-growth.ts): moving checkpoints (1.2 MB each, ~20 per
 *   verification) through noise and yamux set off a full incremental mark
 *   every ~4 checkpoints on a ~17 MiB live heap; that GC was a third of the
 *   fetching peer's CPU (21 → 14 ms per checkpoint with this setting,
 *   docs/benchmarks.md "Shards: checkpoint transfer CPU"). Held all the time,
 *   it let an idle peer in a 40-peer swarm commit 50 MiB of heap for ~25 MiB
 *   live (gossip and connection traffic is garbage too).
 * - `--optimize-for-size`: V8 sizes and compacts its spaces for memory rather
 *   than speed (the growth above still decides when a full GC starts): an idle
 *   peer with a chain client kept ~12 MiB less heap committed (128 → 116 MiB
 *   RSS), and neither gossip nor checkpoint transfer cost more CPU.
 *
 * docs/operators-guide.md, "Memory of a peer". An explicit setting of any
 * (argv or NODE_OPTIONS) is left alone; PROOFSWARM_PEER_HEAP=default (or the
 * older PROOFSWARM_YOUNG_GEN=default) keeps V8's defaults. Returns the flags set
 * at start (`--heap-growing-percent=200@transfers` names the growth held around
 * transfers).
 */
/** Old-generation growth after a full GC, in percent of the live size (V8's default for a small heap is ~50). */
export const PEER_HEAP_GROWING_PERCENT = 200

export function tunePeerHeap (): string[] {
  if (process.env.PROOFSWARM_PEER_HEAP === 'default' || process.env.PROOFSWARM_YOUNG_GEN === 'default') return []
  const explicit = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ')
  const set: string[] = []
  if (!/--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)/.test(explicit)) set.push('--semi-space-growth-factor=1')
  const growth = !/--heap-growing-percent/.test(explicit)
  if (!/--(no-)?optimize[-_]for[-_]size/.test(explicit)) set.push('--optimize-for-size')
  for (const f of set) setFlagsFromString(f)
  if (!growth) return set
  enableHeapGrowthHolds(PEER_HEAP_GROWING_PERCENT)
  return [...set, `--heap-growing-percent=${PEER_HEAP_GROWING_PERCENT}@transfers`]
}
