export { AvailabilityResponder, serveFromRun, type AvailabilityResponderInit, type AnsweredChallenge } from './responder.js'
export { runAvailabilityChallenge, type AvailabilityOutcome } from './challenger.js'
export { corruptCheckpoints } from './fault.js'
