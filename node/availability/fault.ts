import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkpointDir } from '../train/store.js'
import { checkpointDataFile } from '../../protocols/pol/checkpoint.js'

// FAULT INJECTION `join --fault bad-checkpoint` (tests and the devnet only):
// before the run is published, one byte in the middle of every checkpoint's
// state data is flipped in place, so the published checkpoints do not hash to
// the committed state roots, and the solver keeps no true copy: it cannot
// answer a data-availability challenge either (docs/disputes.md).

/** Flips one byte of each checkpoint's data file in the run directory; returns the files changed. */
export function corruptCheckpoints (runDir: string, steps: readonly number[]): string[] {
  const changed: string[] = []
  for (const step of steps) {
    const dir = checkpointDir(runDir, step)
    const mf = join(dir, 'manifest.json')
    if (!existsSync(mf)) continue
    const m = JSON.parse(readFileSync(mf, 'utf8')) as { dataFile?: string }
    const file = join(dir, checkpointDataFile(m))
    if (!existsSync(file)) continue
    const data = readFileSync(file)
    if (data.length === 0) continue
    data[data.length >> 1] ^= 0x5a
    writeFileSync(file, data)
    changed.push(file)
  }
  return changed
}
