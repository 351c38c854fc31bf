import {
  MESSAGE_VERSION, SchemaError, bool, cidStr, decodeCbor, encodeMessage, hash32, list, optional, peerIdStr, record, str, uint, type Check
} from './codec.js'

// The protocol's gossip messages, one topic each (topic → schema is the typed
// map peers agree on). All carry the chain task id so a peer can check them
// against chain state before acting; gossip is a hint, the chain is the truth.

const taskId = uint(2 ** 32 - 1)

export const schemas = {
  /** a submitter announces a task it submitted on chain; the program travels as a shard */
  tasks: record({
    v: uint(255), type: str(16, /^task$/),
    taskId, programHash: hash32, programCid: cidStr, datasetCid: optional(cidStr),
    submitter: peerIdStr, steps: uint(10_000_000), createdAt: uint()
  }),
  /** a solver announces its committed proof and where the checkpoints are */
  proofs: record({
    v: uint(255), type: str(16, /^proof$/),
    taskId, solver: peerIdStr, proofRoot: hash32, finalStateRoot: hash32,
    proofCid: cidStr, modelCid: optional(cidStr),
    checkpoints: list(record({ step: uint(10_000_000), cid: cidStr }), 4096)
  }),
  /** a verifier's verdict, also posted on chain */
  verdicts: record({
    v: uint(255), type: str(16, /^verdict$/),
    taskId, verifier: peerIdStr, accept: bool, checkedSteps: list(uint(10_000_000), 1024),
    firstBadStep: optional(uint(10_000_000))
  }),
  /** dispute lifecycle notices (the moves themselves travel over the dispute protocol) */
  disputes: record({
    v: uint(255), type: str(16, /^dispute$/),
    taskId, disputeId: uint(2 ** 32 - 1), challenger: peerIdStr, defender: peerIdStr,
    phase: str(32, /^(opened|bisecting|adjudicated|timeout)$/), detail: optional(str(512))
  })
} satisfies Record<string, Check<Record<string, unknown>>>

export type ProtocolTopic = keyof typeof schemas
export type MessageOf<T extends ProtocolTopic> = ReturnType<typeof schemas[T]>
export const PROTOCOL_TOPICS = Object.keys(schemas) as ProtocolTopic[]

export function decodeMessage<T extends ProtocolTopic> (topic: T, data: Uint8Array): MessageOf<T> {
  const raw = decodeCbor(data)
  if (raw.v !== MESSAGE_VERSION) throw new SchemaError(`unsupported message version ${String(raw.v)} (this peer speaks ${MESSAGE_VERSION})`)
  return schemas[topic](raw, '') as MessageOf<T>
}

export function encodeTopicMessage<T extends ProtocolTopic> (topic: T, msg: Omit<MessageOf<T>, 'v' | 'type'>): Uint8Array {
  const full = { v: MESSAGE_VERSION, type: TYPE_OF[topic], ...msg } as Record<string, unknown>
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k]
  decodeMessage(topic, encodeMessage(full)) // never send what peers reject
  return encodeMessage(full)
}

const TYPE_OF: Record<ProtocolTopic, string> = { tasks: 'task', proofs: 'proof', verdicts: 'verdict', disputes: 'dispute' }
