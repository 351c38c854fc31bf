import { resetBackend } from '../node/train/backend.js'

// The in-process test files may share a fork (vitest.config.ts): each starts
// with tfjs as a new process has it, whatever the file before it ran.
resetBackend()
