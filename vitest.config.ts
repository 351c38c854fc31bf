import { defineConfig } from 'vitest/config'
import LongestFirst from './test/sequencer.js'

// Integration tests start real OS processes and libp2p peers; keep them in
// separate forks, few at a time. CI machines have 2 cores; a third fork fills
// the time the swarm tests spend waiting on chain blocks and challenge windows
// (their processes use about half a core), and the slowest files start first.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['node/polyfill.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    benchmark: { include: ['test/bench/**/*.bench.ts'] }
  }
})
