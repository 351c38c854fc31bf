import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { removeDir, startChainProcess, tempDir, type ChainProcess } from '../integration/chain-process.js'
import { ROOT, tsScriptArgs } from '../bench/ts-script.js'

// An adversary between a peer and its chain node (a middlebox on the path, a
// hostile RPC host) stalls the connection, then drops it, at moments of its
// choosing, while the peer has reads and transactions in flight. Each failure
// must reach only the call that made it: a promise rejection nobody awaits
// kills a process that has loaded the tfjs wasm backend (its Emscripten
// start-up rethrows every one, node/train/wasm-listeners.ts), and a solver or
// verifier killed that way misses its deadlines and is slashed. Here the
// process is a real one (test/helpers/wasm-chain-client.ts: the wasm backend,
// two chain clients, two reading and two transferring loops); it must live
// through the stalls and the drop, report the lost connection, see no stray
// rejection, and read and transact again once the chain is back.

interface Report { reads: number, readsFailed: number, txs: number, txsFailed: number, stray: string[], lastError: string }

const STALLS = 3
/** longer than the helper's 1.5 s inclusion timeout */
const STALL_MS = 2500

let dir: string | undefined
let chain: ChainProcess | undefined
let client: ChildProcess | undefined

afterAll(async () => {
  client?.kill('SIGKILL')
  if (chain?.proc.signalCode === null && chain.proc.exitCode === null) chain.proc.kill('SIGCONT')
  await chain?.stop()
  if (dir !== undefined) await removeDir(dir)
})

/** A free port below the ephemeral range: a client re-dialling a port there while nothing listens can connect to itself and hold it. */
async function freeLowPort (): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const free = await new Promise<boolean>(resolve => {
      const s = createServer()
      s.once('error', () => resolve(false))
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error('no free port in 20000-32000')
}

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

describe('a peer\'s chain connection stalled and dropped by an adversary, with reads and transactions in flight', () => {
  it(`${STALLS} stalls longer than the transaction timeout, then a drop and a restart: the wasm process lives, sees no stray rejection and recovers`, async () => {
    dir = await tempDir('ps-chain-stall-')
    const port = await freeLowPort()
    const chainArgs = ['--block-time', '100', '--port', String(port)]
    chain = await startChainProcess(dir, chainArgs)
    const url = `ws://127.0.0.1:${port}`
    const proc = spawn(process.execPath, tsScriptArgs(join(ROOT, 'test/helpers/wasm-chain-client.ts'), [url, '90']), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    client = proc
    let out = ''
    let err = ''
    let last: Report | undefined
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const lines = out.split('\n')
      out = lines.pop() ?? ''
      for (const l of lines) if (l.startsWith('{')) last = JSON.parse(l) as Report
    })
    proc.stderr.on('data', (d: Buffer) => { err += d.toString() })
    const alive = (): boolean => proc.exitCode === null && proc.signalCode === null
    const why = (): string => `client ${alive() ? 'alive' : `exited (${proc.exitCode ?? proc.signalCode})`}; last report ${JSON.stringify(last)}; stderr tail:\n${err.slice(-3000)}`
    /** waits (bounded) until the client's report passes `pred`; fails at once if the client died */
    const until = async (pred: (r: Report) => boolean, ms: number, what: string): Promise<Report> => {
      const end = Date.now() + ms
      while (Date.now() < end) {
        if (!alive()) throw new Error(`the client died waiting for ${what}: ${why()}`)
        if (last !== undefined && pred(last)) return last
        await sleep(100)
      }
      throw new Error(`timed out waiting for ${what}: ${why()}`)
    }

    // under load: transfers included and reads answered
    let r = await until(x => x.txs >= 3 && x.reads >= 20, 60_000, 'the first transfers and reads')

    // stalls: the chain process frozen (its socket open, nothing answered) past the inclusion timeout
    for (let i = 0; i < STALLS; i++) {
      const before = r
      chain.proc.kill('SIGSTOP')
      await sleep(STALL_MS)
      chain.proc.kill('SIGCONT')
      expect(alive(), `stall ${i + 1}: ${why()}`).toBe(true)
      r = await until(x => x.txs > before.txs && x.reads > before.reads, 20_000, `transfers and reads after stall ${i + 1}`)
    }
    expect(r.txsFailed, 'a stall longer than the inclusion timeout failed some transfer').toBeGreaterThan(0)

    // the drop: the chain process killed (its socket gone), then restarted on the same port and database
    const beforeDrop = r
    chain.proc.kill('SIGKILL')
    await new Promise(resolve => chain!.proc.exitCode !== null || chain!.proc.signalCode !== null ? resolve(undefined) : chain!.proc.once('exit', resolve))
    await until(x => x.readsFailed > beforeDrop.readsFailed && x.txsFailed > beforeDrop.txsFailed, 10_000, 'reads and transfers failing on the dropped connection')
    await sleep(1000)
    expect(alive(), `after the drop: ${why()}`).toBe(true)
    chain = await startChainProcess(dir, chainArgs)
    const down = last!
    r = await until(x => x.reads > down.reads && x.txs > down.txs, 40_000, 'reads and transfers after the chain came back')

    expect(alive(), why()).toBe(true)
    expect(err, 'the lost connection was reported').toMatch(/lost the chain connection/)
    expect(err, 'the reconnection was reported').toMatch(/reconnected to the chain/)
    expect(r.stray, 'rejections nothing awaited').toEqual([])
  }, 150_000)
})
