#!/usr/bin/env node
// `npm test` (after the build): vitest's two projects (vitest.config.ts) one after the other.
// The in-process files first, sharing their forks (--no-isolate: tfjs, libp2p and @polkadot
// are imported once per fork, not once per file; test/inproc-setup.ts resets tfjs between
// files); then the files that start processes, each in a fork of its own. Both always run;
// the exit code is the first failure's. Extra arguments (file filters) go to both.
import { spawnSync } from 'node:child_process'

const extra = process.argv.slice(2)
// a filter may leave one project without files: that is no failure then
const filtered = extra.length > 0 ? ['--passWithNoTests', ...extra] : []
const run = args => spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args, ...filtered], { stdio: 'inherit' }).status ?? 1
const codes = [run(['--project', 'inproc', '--no-isolate']), run(['--project', 'procs'])]
process.exitCode = codes.find(c => c !== 0) ?? 0
