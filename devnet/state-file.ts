import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

// <devnet dir>/devnet.json: what a running devnet is made of, so that
// `proofswarm devnet status` and `devnet down` can find it from another shell.

export interface DevnetState {
  pid: number
  startedAt: string
  dir: string
  chainUrl?: string
  dashboardUrl?: string
  bootstrap?: string
  processes: Array<{ name: string, pid: number, dataDir?: string, role?: string, account?: string, logFile: string }>
  taskId?: number
  phase?: string
}

export const STATE_FILE = 'devnet.json'

export function writeState (dir: string, s: DevnetState): void {
  writeFileSync(join(dir, STATE_FILE), JSON.stringify(s, null, 2) + '\n')
}

export function readState (dir: string): DevnetState | undefined {
  const f = join(dir, STATE_FILE)
  if (!existsSync(f)) return undefined
  return JSON.parse(readFileSync(f, 'utf8')) as DevnetState
}

export function removeState (dir: string): void {
  rmSync(join(dir, STATE_FILE), { force: true })
}

export function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}
