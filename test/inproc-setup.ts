import { setPriority } from 'node:os'
import { resetBackend } from '../node/train/backend.js'

// The in-process test files may share a fork (vitest.config.ts): each starts
// with tfjs as a new process has it, whatever the file before it ran.
resetBackend()

// npm test runs these files beside the process-starting ones, their forks at a lower CPU
// priority (scripts/test.mjs); raising one's own niceness needs no privilege
const nice = Number(process.env.PROOFSWARM_TEST_NICE ?? 0)
if (Number.isInteger(nice) && nice > 0 && nice <= 19) setPriority(nice)
