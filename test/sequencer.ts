import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

// Test files longest first (longest-processing-time scheduling): the forks end
// together instead of one running a 2-minute swarm test alone at the end while
// the others sit idle. Without recorded timings (every CI run starts from a
// fresh install) vitest orders by file size, which put the short swarm tests,
// some of the slowest files, near the end. A file's expected time is vitest's
// recorded duration when it has one (local reruns), else an estimate from what
// the file starts.

/** Rough seconds each match adds to a file's time (quiet 2-core machine). */
const SECONDS: Array<[RegExp, number]> = [
  // a dev chain, a bootstrap and role peers as processes, tasks run to settlement
  [/ChainSwarm\.start\(|dist\/devnet\/cli\.js'/g, 90],
  // a bootstrap and CLI peers
  [/CliSwarm\.start\(/g, 40],
  [/startChainProcess\(/g, 15],
  [/startCli\(|startShardPeer\(|openDashboard\(|spawn\(|execFile\)/g, 5],
  // training on the real Fashion-MNIST (epochs of it)
  [/datasets\/fashion-mnist'/g, 60],
  // one CLI command to completion
  [/runCli(Json)?\(|\bcli\(/g, 1.5]
]

/** An estimate in ms for a file vitest has no timing for: its processes, and its size (vitest's own order: longer files tend to take longer). */
export function estimateMs (source: string): number {
  let s = source.length / 2000
  for (const [re, seconds] of SECONDS) s += (source.match(re)?.length ?? 0) * seconds
  return s * 1000
}

export default class LongestFirst extends BaseSequencer {
  override async sort (files: TestSpecification[]): Promise<TestSpecification[]> {
    const expected = new Map<TestSpecification, number>()
    for (const f of files) {
      const key = `${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`
      const recorded = this.ctx.cache.getFileTestResults(key)?.duration
      expected.set(f, recorded ?? estimateMs(readFileSync(f.moduleId, 'utf8')))
    }
    return [...files].sort((a, b) => expected.get(b)! - expected.get(a)!)
  }
}
