import type { RolePorts } from '../../actors/index.js'

/**
 * Role ports for a verifier actor test: `verify` as given, every verdict and
 * bisection challenge recorded in `calls` (the challenger wins), the other
 * roles' ports refusing; `extra` adds or replaces ports.
 */
export function verifierPorts (verify: RolePorts['verify'], calls: string[], extra: Partial<RolePorts> = {}): RolePorts {
  return {
    peerId: 'me',
    submitTask: async () => { throw new Error('unused') },
    collectResult: async () => ({}),
    train: async () => { throw new Error('unused') },
    commitProof: async () => {},
    verify,
    submitVerdict: async (t, v) => { calls.push(`verdict ${t} ${v.accept}`) },
    challenge: async (t, against, step) => { calls.push(`challenge ${t} ${against} ${step}`); return { disputeId: 1, winner: 'challenger' } },
    defend: async () => { throw new Error('unused') },
    recheckVerdict: async () => ({ accept: true, checkedSteps: [] }),
    ...extra
  }
}
