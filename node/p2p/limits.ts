// Limits every peer must share: a gossip message larger than a receiver's
// maxInboundDataLength makes the receiver drop the sender's stream, and
// gossipsub silently drops encoded messages over 4 MiB. Gossip carries only
// small messages (ids, commitments); bulk data goes over streams.
export const MAX_GOSSIP_MESSAGE_BYTES = 64 * 1024
export const GOSSIP_MAX_INBOUND_DATA_LENGTH = 1024 * 1024
export const DHT_PROTOCOL = '/proofswarm/kad/1.0.0'
