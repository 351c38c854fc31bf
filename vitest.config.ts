import { defineConfig } from 'vitest/config'

// Two projects, run one after the other by `npm test` (scripts/test.mjs). `inproc`: files whose components all run inside the test
// process (unit tests, the adversarial suite against the pure runtime). npm test
// runs them with --no-isolate: a fork imports tfjs, libp2p and @polkadot once, not
// once per file; test/inproc-setup.ts gives each file tfjs as a new process has it.
// `procs`: files that start real OS processes, libp2p peers or the chain, each in
// a fork of its own, few at a time (CI machines have 2 cores: a third fork, or
// the swarm files started together first, left swarm peers missing their deadlines).
const PROCS = [
  'test/integration/**/*.test.ts', 'test/reliability/**/*.test.ts',
  'test/adversarial/busy-streams.test.ts', 'test/adversarial/connection-flood.test.ts',
  // a chain process and a child process with the wasm backend, stalled and killed
  'test/adversarial/chain-stall.test.ts',
  // its first checks are of V8's baseline code for the wasm kernels: the first calls of a new process
  'test/unit/protocols/nan-tiers.test.ts'
]

// The README's main command end to end (eight processes and Chromium): run by itself after `procs`. Beside
// another swarm file on a 2-core machine its task failed twice (a clean clone and a loaded run); alone it passes.
const DEVNET = ['test/integration/devnet.test.ts']

export default defineConfig({
  test: {
    setupFiles: ['node/polyfill.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    benchmark: { include: ['test/bench/**/*.bench.ts'] },
    projects: [
      { extends: true, test: { name: 'inproc', include: ['test/unit/**/*.test.ts', 'test/adversarial/**/*.test.ts'], exclude: PROCS, setupFiles: ['test/inproc-setup.ts'] } },
      { extends: true, test: { name: 'procs', include: PROCS, exclude: [...DEVNET] } },
      { extends: true, test: { name: 'devnet', include: DEVNET } }
    ]
  }
})
