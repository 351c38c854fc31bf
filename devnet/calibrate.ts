import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { codeCheckpoint } from '../node/erasure/coded-run.js'

/**
 * Times the erasure coding of the last checkpoint a calibration run wrote
 * (the best of two codings: the first also loads the coder), or undefined
 * when the run wrote none. Coding writes chunks next to the checkpoint: only
 * for a directory about to be deleted.
 */
export function timeCheckpointCoding (runDir: string): { ms: number, bytes: number } | undefined {
  const root = join(runDir, 'checkpoints')
  if (!existsSync(root)) return undefined
  const last = readdirSync(root).filter(n => /^step-\d{8}$/.test(n) && existsSync(join(root, n, 'manifest.json'))).sort().pop()
  if (last === undefined) return undefined
  const dir = join(root, last)
  const step = Number(last.slice(5))
  let best = Infinity
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now()
    codeForce(dir, step)
    best = Math.min(best, performance.now() - t0)
  }
  return { ms: best, bytes: statSync(join(dir, 'state.bin')).size }
}

// codeCheckpoint keeps an existing coding: the second timing must code again
function codeForce (dir: string, step: number): void {
  for (const f of ['chunks.bin', 'chunks.json']) { try { rmSync(join(dir, f)) } catch {} }
  codeCheckpoint(dir, step)
}
