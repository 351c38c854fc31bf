import { defineConfig } from 'vitest/config'

// Integration tests start real OS processes and libp2p peers; keep them in
// separate forks, few at a time (CI machines have 2 cores: a third fork, or the
// swarm files started together first, left swarm peers missing their deadlines).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['node/polyfill.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    benchmark: { include: ['test/bench/**/*.bench.ts'] }
  }
})
