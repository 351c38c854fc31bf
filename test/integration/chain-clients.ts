import { afterAll, beforeAll } from 'vitest'
import { ChainClient } from '../../node/chain/client.js'
import { removeDir, startChainProcess, tempDir, type ChainProcess } from './chain-process.js'

// A dev chain process (instant seal) for one test file, with the node's client
// signing as each named dev account: started before the file's tests, stopped
// and its data dir removed after them.

/** `extra`: the chain's arguments (default instant seal). */
export function chainClients (prefix: string, names: readonly string[], extra: string[] = ['--instant-seal']): Record<string, ChainClient> {
  const c: Record<string, ChainClient> = {}
  let chain: ChainProcess | undefined
  let dir: string | undefined
  beforeAll(async () => {
    dir = await tempDir(prefix)
    chain = await startChainProcess(dir, extra)
    for (const n of names) c[n] = await ChainClient.connect({ url: chain.url, signer: `//${n}` })
  })
  afterAll(async () => {
    for (const x of Object.values(c)) await x.disconnect().catch(() => {})
    await chain?.stop()
    if (dir !== undefined) await removeDir(dir)
  })
  return c
}
