import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

export const DEFAULT_NETWORK = 'devnet'
export const DEFAULT_CHAIN_URL = 'ws://127.0.0.1:9944'
import { ROLE_NAMES as ROLES, type RoleName as Role } from '../protocols/roles.js'
export { ROLES, type Role }

/** `~/.proofswarm/<name>` unless the user gave --data-dir. */
export function resolveDataDir (dataDir: string | undefined, name = 'default'): string {
  if (dataDir != null && dataDir !== '') return resolve(dataDir)
  const base = process.env.PROOFSWARM_HOME ?? join(homedir(), '.proofswarm')
  return join(base, name)
}

export function parseRoles (input: string | string[] | undefined): Role[] {
  if (input == null) return []
  const parts = (Array.isArray(input) ? input : [input])
    .flatMap(s => s.split(','))
    .map(s => s.trim().toLowerCase())
    .filter(s => s !== '' && s !== 'none')
  const out: Role[] = []
  for (const p of parts) {
    if (!(ROLES as readonly string[]).includes(p)) {
      throw new Error(`unknown role "${p}": roles are ${ROLES.join(', ')}`)
    }
    if (!out.includes(p as Role)) out.push(p as Role)
  }
  return out
}
