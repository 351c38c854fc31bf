import { randomBytes } from 'node:crypto'
import type { Message } from '@libp2p/gossipsub'
import { RPC } from '@libp2p/gossipsub/message'
import type { PrivateKey } from '@libp2p/interface'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { MAX_GOSSIP_MESSAGE_BYTES } from './limits.js'

// A gossip message as its author signed it, kept so that it can be handed on
// outside gossip (a task-book answer to a peer that missed it) and checked
// there as gossipsub checks it: the signature of its author's peer key over
// "libp2p-pubsub:" and the protobuf message (from, data, seqno, topic). A
// record handed on without it is anyone's word.

const SIGN_PREFIX = new TextEncoder().encode('libp2p-pubsub:')

/** hex fields; `from`: the author's peer id */
export interface SignedEnvelope { from: string, seqno: string, data: string, signature: string }

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')
const signedBytes = (from: Uint8Array, topic: string, data: Uint8Array, seqno: Uint8Array): Uint8Array =>
  new Uint8Array([...SIGN_PREFIX, ...RPC.Message.encode({ from, data, seqno, topic })])

/** The envelope of a received gossip message (undefined: unsigned). */
export function envelopeOf (m: Message): SignedEnvelope | undefined {
  if (m.type !== 'signed') return undefined
  const seqno = Buffer.alloc(8)
  seqno.writeBigUInt64BE(BigInt.asUintN(64, m.sequenceNumber))
  return { from: m.from.toString(), seqno: seqno.toString('hex'), data: hex(m.data), signature: hex(m.signature) }
}

/** Our own message on `topic` (full name), signed as gossipsub would sign it. */
export async function signEnvelope (key: PrivateKey, topic: string, data: Uint8Array): Promise<SignedEnvelope> {
  const from = peerIdFromPrivateKey(key)
  const seqno = randomBytes(8)
  const signature = await key.sign(signedBytes(from.toMultihash().bytes, topic, data, seqno))
  return { from: from.toString(), seqno: hex(seqno), data: hex(data), signature: hex(signature) }
}

/** Checks an envelope (of anyone's) on `topic`: its author and its bytes, or throws. */
export async function openEnvelope (e: unknown, topic: string): Promise<{ author: string, data: Uint8Array }> {
  const x = e as Partial<Record<keyof SignedEnvelope, unknown>> | null
  const field = (k: keyof SignedEnvelope, maxHex: number): Uint8Array => {
    const v = x?.[k]
    if (typeof v !== 'string' || v.length > maxHex || !/^([0-9a-f]{2})*$/.test(v)) throw new Error(`bad envelope field ${k}`)
    return Uint8Array.from(Buffer.from(v, 'hex'))
  }
  const seqno = field('seqno', 16)
  const data = field('data', 2 * MAX_GOSSIP_MESSAGE_BYTES)
  const signature = field('signature', 1024)
  if (typeof x?.from !== 'string' || x.from.length > 128) throw new Error('bad envelope author')
  const author = peerIdFromString(x.from)
  // Ed25519 peer ids hold their key (all of ours: StrictSign gossip needs one to check)
  if (author.publicKey === undefined) throw new Error('the envelope\'s author id holds no key')
  if (!await author.publicKey.verify(signedBytes(author.toMultihash().bytes, topic, data, seqno), signature)) throw new Error('the envelope\'s signature is not its author\'s')
  return { author: author.toString(), data }
}
