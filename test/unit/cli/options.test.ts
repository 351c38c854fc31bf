import { afterAll, describe, expect, it } from 'vitest'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chainInit } from '../../../node/cli/options.js'
import { parseRoles } from '../../../node/config.js'

const dir = mkdtempSync(join(tmpdir(), 'ps-opts-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('chain options', () => {
  it('an account alone uses the default dev chain URL; --chain overrides it', () => {
    expect(chainInit({ account: '//Peer1' })).toMatchObject({ chainUrl: 'ws://127.0.0.1:9944', account: '//Peer1' })
    expect(chainInit({ account: '//Peer1', chain: 'ws://10.0.0.2:9944' }).chainUrl).toBe('ws://10.0.0.2:9944')
    expect(chainInit({}).chainUrl).toBeUndefined()
  })

  it('a key file path that does not exist, or a chain that is not a ws:// URL, is a clear error, not a secret or a dial', () => {
    expect(() => chainInit({ account: '/nonexistent/key' })).toThrow(/no such key file/)
    expect(() => chainInit({ account: './peer.key' })).toThrow(/no such key file/)
    expect(chainInit({ account: 'bottom drive obey lake curtain smoke basket hold race lonely fit walk' }).account).toMatch(/^bottom/)
    expect(() => chainInit({ account: '//Peer1', chain: 'http//x' })).toThrow(/is not a WebSocket URL/)
    expect(() => chainInit({ account: '//Peer1', chain: 'http://127.0.0.1:9944' })).toThrow(/is not a WebSocket URL/)
    expect(chainInit({ account: '//Peer1', chain: 'wss://chain.example:443' }).chainUrl).toBe('wss://chain.example:443')
  })

  it('reads the account from a key file; refuses --chain without an account, an empty key file and a bad stake', () => {
    const f = join(dir, 'key')
    writeFileSync(f, '  bottom drive obey lake curtain smoke basket hold race lonely fit walk\n')
    chmodSync(f, 0o600)
    expect(chainInit({ account: f }).account).toBe('bottom drive obey lake curtain smoke basket hold race lonely fit walk')
    expect(() => chainInit({ chain: 'ws://127.0.0.1:9944' })).toThrow(/--chain needs --account/)
    const empty = join(dir, 'empty')
    writeFileSync(empty, '\n')
    expect(() => chainInit({ account: empty })).toThrow(/is empty/)
    expect(() => chainInit({ account: '//A', stake: '1.5' })).toThrow(/whole number/)
    expect(chainInit({ account: '//A', stake: '3' }).stake).toBe(3n * 10n ** 12n)
  })
})

describe('roles', () => {
  it('parses, dedupes and names unknown roles', () => {
    expect(parseRoles('solver, verifier,solver')).toEqual(['solver', 'verifier'])
    expect(parseRoles(['none'])).toEqual([])
    expect(() => parseRoles('miner')).toThrow(/unknown role "miner"/)
  })
})
