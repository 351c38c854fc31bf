import { randomBytes } from 'node:crypto'
import { chmod, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// The control API is found through two files in the data dir: control.json
// (port, pid, peer id; world-readable) and control.token (mode 0600). A CLI
// run by the same user reads both; other local users cannot read the token.

export interface ControlInfo {
  port: number
  pid: number
  peerId: string
  startedAt: string
}

export const CONTROL_FILE = 'control.json'
export const TOKEN_FILE = 'control.token'

export async function writeControlFiles (dataDir: string, info: ControlInfo, token: string): Promise<void> {
  const tokenPath = join(dataDir, TOKEN_FILE)
  await writeFile(tokenPath, token + '\n', { mode: 0o600 })
  await chmod(tokenPath, 0o600) // mode is ignored when the file already existed
  await writeFile(join(dataDir, CONTROL_FILE), JSON.stringify(info, null, 2) + '\n')
}

export async function removeControlFiles (dataDir: string): Promise<void> {
  await rm(join(dataDir, CONTROL_FILE), { force: true })
}

export function newToken (): string {
  return randomBytes(32).toString('hex')
}

export async function readControlFiles (dataDir: string): Promise<{ info: ControlInfo, token: string }> {
  let raw: string
  try {
    raw = await readFile(join(dataDir, CONTROL_FILE), 'utf8')
  } catch {
    throw new Error(`no running peer found in ${dataDir} (no ${CONTROL_FILE}); start one with "proofswarm bootstrap" or "proofswarm join", or pass the right --data-dir`)
  }
  const info = JSON.parse(raw) as ControlInfo
  const token = (await readFile(join(dataDir, TOKEN_FILE), 'utf8')).trim()
  return { info, token }
}
