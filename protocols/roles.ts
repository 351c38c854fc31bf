// The four roles a peer can take, and their bits in the pallet's
// NodeInfo.roles mask. One definition for the chain runtime, the actors and
// the node.

export const ROLE_NAMES = ['submitter', 'solver', 'verifier', 'whistleblower'] as const
export type RoleName = typeof ROLE_NAMES[number]

export const ROLE_SUBMITTER = 1
export const ROLE_SOLVER = 2
export const ROLE_VERIFIER = 4
export const ROLE_WHISTLEBLOWER = 8
/** every role bit: a registration's mask must be non-zero and within it */
export const ROLE_ALL = 15

export const ROLE_BITS: Readonly<Record<RoleName, number>> = {
  submitter: ROLE_SUBMITTER, solver: ROLE_SOLVER, verifier: ROLE_VERIFIER, whistleblower: ROLE_WHISTLEBLOWER
}

export function isRoleName (s: string): s is RoleName {
  return (ROLE_NAMES as readonly string[]).includes(s)
}

/** The pallet's bitmask of a set of roles. */
export function rolesMask (roles: readonly RoleName[]): number {
  return roles.reduce((m, r) => m | ROLE_BITS[r], 0)
}

/** The roles in a pallet bitmask, in ROLE_NAMES order. */
export function rolesOfMask (mask: number): RoleName[] {
  return ROLE_NAMES.filter(r => (mask & ROLE_BITS[r]) !== 0)
}
