import { describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { encode as cborEncode } from 'cborg'
import {
  DAG_CBOR_CODEC, MAX_BLOCK_BYTES, MAX_REQUEST_BYTES, RAW_CODEC, Status, blockMatches, buildManifest, chunk, cidOf,
  decodeManifest, decodeRequest, decodeResponse, encodeManifest, encodeRequest, encodeResponseHeader, parseShardCid
} from '../../../protocols/shards/index.js'

describe('shard CIDs and chunking', () => {
  it('a raw block CID is CIDv1 sha256 and matches only its bytes', () => {
    const b = randomBytes(1000)
    const cid = cidOf(b)
    expect(cid.version).toBe(1)
    expect(cid.code).toBe(RAW_CODEC)
    expect(cid.toString()).toMatch(/^bafkrei/)
    expect(blockMatches(cid, b)).toBe(true)
    const bad = Uint8Array.from(b); bad[500] ^= 1
    expect(blockMatches(cid, bad)).toBe(false)
    expect(blockMatches(cid, b.subarray(1))).toBe(false)
  })

  it('the CID of "hello world" equals the one IPFS computes for a raw leaf', () => {
    // ipfs add --raw-leaves --cid-version 1 of the 11 bytes "hello world"
    expect(cidOf(new TextEncoder().encode('hello world')).toString()).toBe('bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e')
  })

  it('chunks into ≤ 1 MiB blocks that reassemble to the input', () => {
    const data = randomBytes(2 * MAX_BLOCK_BYTES + 123)
    const chunks = [...chunk(data)]
    expect(chunks.map(c => c.bytes.length)).toEqual([MAX_BLOCK_BYTES, MAX_BLOCK_BYTES, 123])
    expect(Buffer.concat(chunks.map(c => c.bytes)).equals(data)).toBe(true)
    expect(() => [...chunk(data, MAX_BLOCK_BYTES + 1)]).toThrow(/block size/)
  })

  it('parseShardCid refuses garbage and non-sha256 CIDs with a message naming them', () => {
    expect(() => parseShardCid('nope')).toThrow('invalid CID "nope"')
    expect(() => parseShardCid('QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG')).toThrow(/unsupported CID/)
  })
})

describe('manifest', () => {
  const blocks = [...chunk(randomBytes(MAX_BLOCK_BYTES + 10))].map(c => ({ cid: c.cid, size: c.bytes.length }))

  it('round-trips through dag-cbor and its CID is dag-cbor sha256', () => {
    const { manifest, bytes, cid } = buildManifest(blocks, { name: 'ckpt-3', kind: 'checkpoint', labels: { task: 't1' } })
    expect(cid.code).toBe(DAG_CBOR_CODEC)
    expect(blockMatches(cid, bytes)).toBe(true)
    const back = decodeManifest(bytes)
    expect(back.size).toBe(MAX_BLOCK_BYTES + 10)
    expect(back.blocks.map(b => b.cid.toString())).toEqual(manifest.blocks.map(b => b.cid.toString()))
    expect(back.labels).toEqual({ task: 't1' })
    expect(encodeManifest(back)).toEqual(bytes)
  })

  it('refuses inconsistent or malformed manifests', () => {
    const { manifest } = buildManifest(blocks, {})
    expect(() => encodeManifest({ ...manifest, size: 5 })).toThrow(/differs from the sum/)
    expect(() => encodeManifest({ ...manifest, blockSize: MAX_BLOCK_BYTES * 2 })).toThrow(/block size/)
    expect(() => encodeManifest({ ...manifest, kind: 'weird' as any })).toThrow(/unknown shard kind/)
    expect(() => decodeManifest(new Uint8Array([0xff, 0x00]))).toThrow(/not valid dag-cbor/)
    expect(() => decodeManifest(cborEncode({ format: 'other', blocks: [] }))).toThrow(/not a shard manifest|no block list/)
  })
})

describe('wire messages', () => {
  it('requests and responses round-trip; oversized or short frames are refused', () => {
    const cid = cidOf(new Uint8Array([1, 2, 3]))
    const r = decodeRequest(encodeRequest({ id: 7, cid }))
    expect(r.id).toBe(7)
    expect(r.cid.equals(cid)).toBe(true)
    expect(() => decodeRequest(new Uint8Array(MAX_REQUEST_BYTES + 1))).toThrow(/over/)
    expect(() => decodeRequest(new Uint8Array([0, 0, 0, 1, 9, 9]))).toThrow(/invalid CID/)
    const payload = randomBytes(100)
    const resp = decodeResponse(Buffer.concat([encodeResponseHeader(Status.OK, 7), payload]))
    expect(resp.status).toBe(Status.OK)
    expect(resp.id).toBe(7)
    expect(Buffer.from(resp.payload).equals(payload)).toBe(true)
    expect(() => decodeResponse(new Uint8Array(3))).toThrow(/too short/)
    expect(() => decodeResponse(Uint8Array.of(9, 0, 0, 0, 1))).toThrow(/unknown response status/)
  })
})
