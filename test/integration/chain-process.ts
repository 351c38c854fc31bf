import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import type { KeyringPair } from '@polkadot/keyring/types'
import type { ISubmittableResult } from '@polkadot/types/types'
import WebSocket from 'ws'

// Starts the dev chain as a separate OS process from the compiled CLI, the
// way users and the devnet run it, and connects an unmodified ApiPromise.

export const MAIN = join(process.cwd(), 'dist/node/cli/main.js')

export interface ChainProcess { url: string, proc: ChildProcess, dataDir: string, stop: () => Promise<void>, stderr: () => string }

export async function tempDir (prefix: string): Promise<string> {
  return await mkdtemp(join(tmpdir(), prefix))
}

export async function startChainProcess (dataDir: string, extra: string[] = ['--instant-seal'], env: Record<string, string> = {}): Promise<ChainProcess> {
  const proc = spawn(process.execPath, [MAIN, 'chain', '--port', '0', '--data-dir', dataDir, '--json', '--log-level', 'warn', ...extra], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let err = ''
  proc.stderr?.on('data', (d: Buffer) => { err += d.toString() })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    // a chain that did not start is killed: left running, it would slow every later test of the run
    const t = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`chain did not start in 20 s: ${err}`)) }, 20_000)
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const line = out.split('\n').find(l => l.startsWith('{'))
      if (line !== undefined && out.includes('\n')) { clearTimeout(t); resolve((JSON.parse(line) as { url: string }).url) }
    })
    proc.once('exit', code => { clearTimeout(t); reject(new Error(`chain exited with ${code}: ${err}`)) })
  })
  const stop = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise<void>(resolve => proc.once('exit', () => resolve()))
    proc.kill('SIGTERM')
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(t)
  }
  return { url, proc, dataDir, stop, stderr: () => err }
}

export async function connect (url: string): Promise<ApiPromise> {
  return await ApiPromise.create({ provider: new WsProvider(url, 1000), noInitWarn: true, throwOnConnect: true })
}

export async function removeDir (dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

export interface SendResult { inBlock?: string, finalized?: string, events: string[], error?: string }

/** signAndSend and wait until finalized; module errors are decoded with findMetaError. */
export async function sendAndFinalize (api: ApiPromise, tx: SubmittableExtrinsic<'promise'>, signer: KeyringPair, timeoutMs = 20_000): Promise<SendResult> {
  const res: SendResult = { events: [] }
  return await new Promise<SendResult>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('not finalized in time')), timeoutMs)
    tx.signAndSend(signer, (r: ISubmittableResult) => {
      // @polkadot/api drops InBlock when Finalized follows before InBlock's events
      // were fetched (a loaded machine): the Finalized result carries them then
      if (r.status.isInBlock || (r.status.isFinalized && res.inBlock === undefined)) {
        res.inBlock = (r.status.isInBlock ? r.status.asInBlock : r.status.asFinalized).toHex()
        res.events = r.events.map(e => `${e.event.section}.${e.event.method}`)
        if (r.dispatchError !== undefined) {
          if (r.dispatchError.isModule) {
            const m = api.registry.findMetaError(r.dispatchError.asModule)
            res.error = `${m.section}.${m.name}`
          } else res.error = r.dispatchError.type
        }
      }
      if (r.status.isFinalized) { res.finalized = r.status.asFinalized.toHex(); clearTimeout(t); resolve(res) }
      if (r.isError) { clearTimeout(t); reject(new Error(`tx ${r.status.type}`)) }
    }).catch((e: Error) => { clearTimeout(t); reject(e) })
  })
}

/** One raw JSON-RPC request over a fresh WebSocket (to see exactly what the server answers). */
export async function raw (url: string, body: string | object): Promise<any> {
  const ws = new WebSocket(url)
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  try {
    const reply = new Promise<string>((resolve, reject) => {
      ws.once('message', d => resolve(d.toString()))
      ws.once('close', code => reject(new Error(`closed ${code}`)))
    })
    ws.send(typeof body === 'string' ? body : JSON.stringify(body))
    return JSON.parse(await reply)
  } finally { ws.close() }
}
