import type { RolePorts } from '../../actors/ports.js'
import type { Peer } from '../peer.js'

// The peer-side implementation of what role actors ask for. Each capability
// needs a backing service (chain client, training engine, shard exchange);
// when one is missing the call fails with a message saying what to configure,
// and the actor records the error in its trace instead of hanging.

export class MissingServiceError extends Error {
  constructor (what: string, hint: string) {
    super(`${what} is not available on this peer: ${hint}`)
    this.name = 'MissingServiceError'
  }
}

const NO_CHAIN = 'start the peer with --account <suri|keyfile> (and --chain <ws-url> unless the dev chain runs on ws://127.0.0.1:9944)'

export function unavailablePorts (peer: Peer): RolePorts {
  const fail = (what: string) => async (): Promise<never> => { throw new MissingServiceError(what, NO_CHAIN) }
  return {
    peerId: peer.peerId,
    submitTask: fail('task submission'),
    collectResult: fail('result collection'),
    train: fail('training'),
    commitProof: fail('proof commitment'),
    verify: fail('verification'),
    submitVerdict: fail('verdict submission'),
    challenge: fail('disputes'),
    defend: fail('disputes'),
    recheckVerdict: fail('verdict re-checking')
  }
}
