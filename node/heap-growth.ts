import { setFlagsFromString } from 'node:v8'

/**
 * V8's old-generation growth after a full GC, raised only while the peer moves
 * checkpoints (shard fetch, serve, add). A peer that streams 1.2 MB checkpoints
 * through noise and yamux with V8's growth (~1.3× its live size with
 * `--optimize-for-size`) marks its whole heap every few checkpoints; 3× cut a
 * verifier's fetch CPU by a third (docs/benchmarks.md, "Shards: checkpoint
 * transfer CPU"). Kept on all the time, the same 3× let an idle peer in a
 * busy swarm carry two live heaps of garbage (50 MiB committed over ~25 MiB
 * live at 40 peers), so it is held only around transfers and dropped
 * LINGER_MS after the last one ends (a verifier fetches its checkpoints one
 * after another).
 *
 * V8 reads the flag whenever it sets the next GC's limit (after each full GC),
 * so changing it at run time takes effect from the next full GC on. Enabled by
 * the CLI for `join` / `bootstrap` (node/cli/peer-heap.ts); without that, holds
 * do nothing.
 */
const LINGER_MS = 5_000

let percent = 0
let holds = 0
let raised = false
let linger: NodeJS.Timeout | undefined

/** Lets holdHeapGrowth raise the growth to `growingPercent` (of the live size) while held. */
export function enableHeapGrowthHolds (growingPercent: number): void { percent = growingPercent }

function set (p: number): void { setFlagsFromString(`--heap-growing-percent=${p}`) }

/** Raises the old generation's growth until the returned release is called (once; later calls do nothing). */
export function holdHeapGrowth (): () => void {
  if (percent <= 0) return () => {}
  holds++
  if (linger != null) { clearTimeout(linger); linger = undefined }
  if (!raised) { set(percent); raised = true }
  let released = false
  return () => {
    if (released) return
    released = true
    if (--holds > 0) return
    linger = setTimeout(() => { linger = undefined; if (holds === 0 && raised) { set(0); raised = false } }, LINGER_MS)
    linger.unref()
  }
}

/** Runs `work` with the growth held. */
export async function withHeapGrowth<T> (work: () => Promise<T>): Promise<T> {
  const release = holdHeapGrowth()
  try { return await work() } finally { release() }
}

/** Whether the raised growth is in force now (tests, status). */
export function heapGrowthRaised (): boolean { return raised }
