import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { ControlClient } from '../../node/control/client.js'
import { startCliBootstrap, type CliBootstrap } from '../helpers/cli-peers.js'
import { runCli, sleep, stopProc, tempDir } from '../helpers/procs.js'

// A stray promise rejection (a failure nothing awaited, as a dropped stream or
// chain query can leave) inside a real `proofswarm` peer process: the peer
// logs it, counts it in its status and metrics, and goes on serving. Node's
// default would end the process, so anyone able to make a peer's I/O fail at
// the right moment could stop it (node/process-policy.ts). The rejection is
// made inside the process, on SIGUSR2, by a module preloaded with --import
// (main thread only): a fault we cannot cause from outside without a bug to trigger.

let dir: { path: string, cleanup: () => Promise<void> } | undefined
let boot: CliBootstrap | undefined
afterAll(async () => {
  if (boot !== undefined) await stopProc(boot.proc)
  await dir?.cleanup()
})

describe('a stray rejection inside a running peer', () => {
  it('is logged, counted in status and metrics, and the peer keeps serving', async () => {
    dir = await tempDir('ps-stray-')
    const inject = join(dir.path, 'stray.mjs')
    writeFileSync(inject, [
      'import { isMainThread } from \'node:worker_threads\'',
      'if (isMainThread) process.on(\'SIGUSR2\', () => { Promise.reject(new Error(\'stray rejection made by the test\')) })'
    ].join('\n'))
    boot = await startCliBootstrap(join(dir.path, 'boot'), { NODE_OPTIONS: `--import=${pathToFileURL(inject).href}` })
    const proc = boot.proc
    // the peer is up (it printed its addresses): the rejection comes now
    proc.child.kill('SIGUSR2')
    const dd = ['--data-dir', join(dir.path, 'boot')]
    type Status = { unhandledRejections: { count: number, last?: { message: string } } }
    let status: Status | undefined
    for (const end = Date.now() + 30_000; status === undefined && Date.now() < end; await sleep(200)) {
      // a peer that died of it fails at once, with its log
      expect(proc.child.exitCode ?? proc.child.signalCode, `the peer exited: ${proc.stderr().slice(-2000)}`).toBeNull()
      const r = await runCli(['status', '--json', ...dd])
      if (r.code !== 0) continue
      const s = JSON.parse(r.stdout) as Status
      if (s.unhandledRejections.count > 0) status = s
    }
    if (status === undefined) throw new Error(`no stray rejection in status within 30 s: ${proc.stderr().slice(-2000)}`)
    expect(status.unhandledRejections.count).toBe(1)
    expect(status.unhandledRejections.last?.message).toBe('Error: stray rejection made by the test')
    await sleep(500)
    expect(proc.child.exitCode, proc.stderr().slice(-2000)).toBeNull()
    const line = proc.stderr().split('\n').find(l => l.includes('unhandled promise rejection #1'))
    expect(line, proc.stderr().slice(-2000)).toBeDefined()
    expect(JSON.parse(line!)).toMatchObject({ level: 50, unhandledRejections: 1, err: { message: 'stray rejection made by the test' } })
    // still serving: its control API answers, with the count in its metrics and its status text
    const metrics = await (await ControlClient.fromDataDir(join(dir.path, 'boot'))).get<string>('/metrics')
    expect(metrics).toMatch(/^proofswarm_unhandled_rejections_total 1$/m)
    expect((await runCli(['status', ...dd])).stdout).toMatch(/^unhandled rejections: 1 \(last at \S+: Error: stray rejection made by the test\)$/m)
  }, 90_000)
})
