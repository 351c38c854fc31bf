import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { raw, removeDir, startChainProcess, tempDir, type ChainProcess } from '../integration/chain-process.js'

// Anyone who reaches a chain's RPC port could fast-forward it with
// engine_createBlock (1,024 blocks in 0.68 s on a timer chain), and every
// deadline — challenge window, solve timeout, dispute windows — is counted in
// blocks. Manual seal is served only on instant-seal chains or with an
// explicit --unsafe-rpc. Method names are looked up as own properties only.

let timer: ChainProcess
let unsafe: ChainProcess
const dirs: string[] = []

beforeAll(async () => {
  dirs.push(await tempDir('ps-rpc-timer-'), await tempDir('ps-rpc-unsafe-'))
  timer = await startChainProcess(dirs[0], ['--block-time', '2000'])
  unsafe = await startChainProcess(dirs[1], ['--block-time', '2000', '--unsafe-rpc', '--forced-error-ppm', '250000'])
})

afterAll(async () => {
  await timer?.stop()
  await unsafe?.stop()
  for (const d of dirs) await removeDir(d)
})

const head = async (url: string): Promise<number> => parseInt((await raw(url, { jsonrpc: '2.0', id: 1, method: 'chain_getHeader', params: [] })).result.number, 16)

describe('dev-only RPCs', () => {
  it('a timer chain refuses engine_createBlock: nobody fast-forwards its deadlines', async () => {
    const before = await head(timer.url)
    for (let i = 0; i < 20; i++) {
      const r = await raw(timer.url, { jsonrpc: '2.0', id: i, method: 'engine_createBlock', params: [true, true] })
      expect(r.error?.code).toBe(-32601)
    }
    // at most the timer's own blocks went by (2 s each)
    expect(await head(timer.url) - before).toBeLessThanOrEqual(2)
    const methods = (await raw(timer.url, { jsonrpc: '2.0', id: 1, method: 'rpc_methods', params: [] })).result.methods as string[]
    expect(methods).not.toContain('engine_createBlock')
  })

  it('with --unsafe-rpc (tests only) it is served', async () => {
    const before = await head(unsafe.url)
    const r = await raw(unsafe.url, { jsonrpc: '2.0', id: 1, method: 'engine_createBlock', params: [true, true] })
    expect(r.error).toBeUndefined()
    expect(await head(unsafe.url)).toBeGreaterThan(before)
  })

  it('methods are own properties: names from the object prototype are not methods', async () => {
    for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const r = await raw(timer.url, { jsonrpc: '2.0', id: 1, method, params: [] })
      expect(r.result).toBeUndefined()
      expect(r.error?.code).toBe(-32601)
    }
  })

  it('a chain without forced errors warns at start that lazy verification goes untested', async () => {
    const warning = (c: ChainProcess): unknown[] => c.stderr().split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l)).filter(l => /forced errors are off/.test(l.msg))
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(warning(timer)).toEqual([expect.objectContaining({ level: 40, forcedErrorPpm: 0 })])
    expect(warning(unsafe)).toEqual([])
  })
})
