import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { describe, expect, it } from 'vitest'
import { openEnvelope, signEnvelope } from '../../../node/p2p/signed-envelope.js'

// A gossip message kept with its author's signature, to be handed on outside
// gossip (the task book's answers; a received message's envelope is checked
// against gossipsub's own signature in test/adversarial/taskbook-poison.test.ts).

const TOPIC = '/proofswarm/devnet/tasks/1'
const data = new TextEncoder().encode('an announcement')

describe('signed envelopes', () => {
  it('open with their author; changed bytes, another topic or another author\'s name do not', async () => {
    const key = await generateKeyPair('Ed25519')
    const e = await signEnvelope(key, TOPIC, data)
    const opened = await openEnvelope(e, TOPIC)
    expect(opened.author).toBe(peerIdFromPrivateKey(key).toString())
    expect(Buffer.from(opened.data).toString()).toBe('an announcement')
    await expect(openEnvelope({ ...e, data: Buffer.from('another announcement').toString('hex') }, TOPIC)).rejects.toThrow(/not its author's/)
    await expect(openEnvelope(e, '/proofswarm/devnet/proofs/1')).rejects.toThrow(/not its author's/)
    const other = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    await expect(openEnvelope({ ...e, from: other }, TOPIC)).rejects.toThrow(/not its author's/)
    await expect(openEnvelope({ ...e, seqno: 'zz' }, TOPIC)).rejects.toThrow(/bad envelope field seqno/)
    await expect(openEnvelope(null, TOPIC)).rejects.toThrow(/bad envelope/)
  })
})
