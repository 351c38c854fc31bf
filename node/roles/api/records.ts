import type { AvailabilityResponder } from '../../availability/responder.js'
import type { Handlers } from '../../control/routes.js'
import type { DisputeService } from '../../dispute/index.js'
import type { ChunkResponder } from '../../erasure/responder.js'
import type { RolesEndpoints } from './routes.js'

// What this peer's responders finished: disputes (and the ones it is
// challenging now, marked open), availability challenges and chunk-sample
// requests it answered (empty without a chain).

export interface Responders { disputes?: DisputeService, availability?: AvailabilityResponder, chunkRequests?: ChunkResponder }

export function recordHandlers (r: Responders): Pick<Handlers<RolesEndpoints>, 'disputes' | 'availability' | 'chunkRequests'> {
  return {
    disputes: () => r.disputes != null ? [...r.disputes.finished, ...r.disputes.ongoing.values()] : [],
    availability: () => r.availability?.handled ?? [],
    chunkRequests: () => r.chunkRequests?.handled ?? []
  }
}
