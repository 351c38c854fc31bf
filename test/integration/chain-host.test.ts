import { networkInterfaces } from 'node:os'
import { afterAll, describe, expect, it } from 'vitest'
import { dialableUrls } from '../../devnet/cli/chain-command.js'
import { connect, removeDir, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// A chain for peers on other hosts listens on every interface; what it prints
// must be URLs those peers can dial, never ws://0.0.0.0.

let chain: ChainProcess | undefined
let dir: string
afterAll(async () => { await chain?.stop(); if (dir !== undefined) await removeDir(dir) })

describe('proofswarm chain --host 0.0.0.0', () => {
  it('prints dialable URLs (one per interface), and the first one connects', async () => {
    dir = await tempDir('ps-chain-host-')
    chain = await startChainProcess(dir, ['--host', '0.0.0.0', '--instant-seal'])
    expect(chain.url).not.toContain('0.0.0.0')
    const lan = Object.values(networkInterfaces()).flat().filter(i => i != null && i.family === 'IPv4' && !i.internal).map(i => i!.address)
    expect(lan.some(a => chain!.url.includes(a)) || chain.url.includes('127.0.0.1')).toBe(true)
    const api = await connect(chain.url)
    expect((await api.rpc.system.chain()).toString()).toMatch(/proofswarm/)
    await api.disconnect()
  })

  it('leaves a specific address alone', () => {
    expect(dialableUrls('ws://10.77.0.2:9944')).toEqual(['ws://10.77.0.2:9944'])
    expect(dialableUrls('ws://0.0.0.0:9944').every(u => !u.includes('0.0.0.0'))).toBe(true)
    expect(dialableUrls('ws://0.0.0.0:9944').at(-1)).toBe('ws://127.0.0.1:9944')
  })
})
