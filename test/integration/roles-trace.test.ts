import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { firstJson, hasJson, killAll, runCli, startCli, stopProc, tempDir, waitFor, waitForOutput, type Proc } from '../helpers/procs.js'

// Switch a running peer's roles through the CLI and read its actor traces.

let dir: { path: string, cleanup: () => Promise<void> }
let boot: Proc
let peer: Proc
let dataDir: string

beforeAll(async () => {
  dir = await tempDir()
  boot = startCli(['bootstrap', '--data-dir', join(dir.path, 'boot'), '--listen', '/ip4/127.0.0.1/tcp/0', '--json'])
  await waitForOutput(boot, hasJson, 20_000, 'bootstrap ready')
  dataDir = join(dir.path, 'p')
  peer = startCli(['join', '--bootstrap', firstJson(boot.stdout()).multiaddrs[0], '--roles', 'solver', '--data-dir', dataDir, '--json'])
  await waitForOutput(peer, hasJson, 20_000, 'peer ready')
})

afterAll(async () => {
  await Promise.all([boot, peer].filter(Boolean).map(async p => await stopProc(p)))
  killAll()
  await dir?.cleanup()
})

async function cli (...args: string[]): Promise<any> {
  const r = await runCli([...args, '--json', '--data-dir', dataDir])
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`)
  // trace --json prints JSON lines; other commands one JSON document
  if (args[0] === 'trace') return r.stdout.split('\n').filter(l => l.trim() !== '').map(l => JSON.parse(l))
  return JSON.parse(r.stdout)
}

describe('roles and traces on a running peer', () => {
  it('switches roles without a restart, and persists them', async () => {
    expect((await cli('roles')).roles).toEqual(['solver'])
    const added = await cli('roles', 'add', 'verifier,whistleblower')
    expect(added.roles).toEqual(['solver', 'verifier', 'whistleblower'])
    expect(Object.keys(added.active).sort()).toEqual(['solver', 'verifier', 'whistleblower'])
    const removed = await cli('roles', 'remove', 'solver')
    expect(removed.roles).toEqual(['verifier', 'whistleblower'])
    const set = await cli('roles', 'set', 'submitter')
    expect(set.roles).toEqual(['submitter'])
    const status = await cli('status')
    expect(status.roles).toEqual(['submitter'])
    expect(peer.child.exitCode).toBeNull() // same process all along
    const actors = await cli('roles')
    expect(Object.values(actors.active)).toEqual([expect.stringMatching(/^submitter#\d+$/)])
  })

  it('refuses unknown roles and operations with a clear error', async () => {
    const r = await runCli(['roles', 'add', 'miner', '--data-dir', dataDir])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('unknown role "miner"')
    const r2 = await runCli(['roles', 'frobnicate', 'solver', '--data-dir', dataDir])
    expect(r2.code).not.toBe(0)
    expect(r2.stderr).toContain('unknown roles operation "frobnicate"')
    // an empty set would stop every role of the running peer: refused, nothing changes
    const before = (await cli('roles')).roles
    const r3 = await runCli(['roles', 'set', '--data-dir', dataDir])
    expect(r3.code).toBe(2)
    expect(r3.stderr).toContain('roles set needs at least one role')
    expect((await cli('roles')).roles).toEqual(before)
  })

  it('traces show every actor spawn, transition and stop in order, filterable', async () => {
    const all: any[] = await waitFor(async () => {
      const t = await cli('trace')
      return t.some((e: any) => e.actorId.startsWith('submitter#') && e.kind === 'spawned') ? t : undefined
    }, 10_000, 'submitter spawn in traces')
    const sup = all.filter(e => e.actorId === 'supervisor' && e.event.startsWith('roles.'))
    // the initial roles are applied inside the supervisor's start (event xstate.init)
    expect(all.filter(e => e.actorId === 'supervisor').slice(0, 2).map(e => `${e.event}:${e.to ?? ''}`)).toEqual(['spawn:', 'xstate.init:running'])
    expect(sup.map(e => e.event)).toEqual(['roles.add', 'roles.remove', 'roles.set'])
    expect(sup[0].detail.roles).toEqual(['verifier', 'whistleblower'])
    const solver = all.filter(e => e.role === 'solver')
    // an idle solver asked to drain retires at once
    expect(solver.map(e => `${e.kind}:${e.event}:${e.from ?? ''}->${e.to ?? ''}`)).toEqual(['spawned:spawn:->', 'transition:xstate.init:->active.work.idle,active.disputes.idle', 'stopped:drain:active.work.idle,active.disputes.idle->retired'])
    for (let i = 1; i < all.length; i++) expect(all[i].time).toBeGreaterThanOrEqual(all[i - 1].time)
    const onlyVerifier = await cli('trace', '--role', 'verifier')
    expect(onlyVerifier.length).toBeGreaterThan(0)
    expect(onlyVerifier.every((e: any) => e.role === 'verifier')).toBe(true)
    const future = await cli('trace', '--since', String(Date.now() + 60_000))
    expect(future).toEqual([])
  })

  it('follows traces live over server-sent events', async () => {
    const f = startCli(['trace', '--follow', '--json', '--data-dir', dataDir])
    await new Promise(resolve => setTimeout(resolve, 500))
    await cli('roles', 'add', 'verifier')
    await waitForOutput(f, out => out.includes('"roles.add"') && /"actorId":"verifier#\d+"/.test(out), 10_000, 'live trace lines')
    await stopProc(f)
  })

  it('keeps traces across a restart; a follower is told when the peer stops', async () => {
    const f = startCli(['trace', '--follow', '--json', '--data-dir', dataDir])
    await waitForOutput(f, out => out.includes('"actorId"'), 10_000, 'the follower streaming')
    await stopProc(peer)
    // the follower ends on its own, non-zero, saying why (not silently, as if the peer were quiet)
    const t0 = Date.now()
    expect(await Promise.race([f.exited, new Promise(resolve => setTimeout(() => resolve('still running'), 10_000))])).toBe(1)
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(f.stderr()).toContain('trace stream ended')
    peer = startCli(['join', '--bootstrap', firstJson(boot.stdout()).multiaddrs[0], '--data-dir', dataDir, '--json'])
    await waitForOutput(peer, hasJson, 20_000, 'peer ready again')
    const t = await cli('trace', '--actor', 'supervisor')
    expect(t.filter((e: any) => e.event === 'roles.remove').length).toBe(1)
    expect((await cli('roles')).roles).toEqual(['submitter', 'verifier'])
    expect(JSON.parse(await readFile(join(dataDir, 'control.json'), 'utf8')).pid).toBe(peer.child.pid)
  })
})
