// Gossip topic names: /proofswarm/<network>/<topic>/<version>. The network
// name keeps devnets, testnets and mainnet apart on shared bootstrap peers.
export const GOSSIP_TOPICS = ['tasks', 'proofs', 'verdicts', 'disputes', 'announce'] as const
export type GossipTopic = typeof GOSSIP_TOPICS[number]

export function topicName (network: string, topic: string, version = 1): string {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(network)) throw new Error(`invalid network name "${network}": use lowercase letters, digits and dashes`)
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(topic)) throw new Error(`invalid topic "${topic}"`)
  return `/proofswarm/${network}/${topic}/${version}`
}

/** Returns the short topic of a full name on this network, or undefined. */
export function parseTopicName (network: string, full: string): { topic: string, version: number } | undefined {
  const m = /^\/proofswarm\/([^/]+)\/([^/]+)\/(\d+)$/.exec(full)
  if (m == null || m[1] !== network) return undefined
  return { topic: m[2], version: Number(m[3]) }
}
