export { DisputeService, type DisputeServiceInit } from './service.js'
export { forcedErrorDraw, type ForcedDraw } from './forced-error.js'
export { parseNodeFaults, tapeFaults, trainFaults, anyFault, NO_NODE_FAULTS, type NodeFaults } from './faults.js'
export { DISPUTE_PROTOCOL, MAX_FRAME_BYTES } from './transport.js'
