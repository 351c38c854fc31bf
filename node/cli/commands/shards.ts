import { resolve } from 'node:path'
import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import { readControlFiles } from '../../control/files.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, collect, dataDirOf, parseIntOption, printJson } from '../options.js'

// Operator tools for content-addressed shards (checkpoints, datasets,
// models), like `ipfs add/get/ls/pin`, through a running peer.

interface Common { dataDir?: string, json?: boolean }

/** One row of the control API's GET /v1/shards/ls. */
interface ShardListing {
  cid: string
  kind: string
  size: number
  complete: boolean
  pinned?: boolean
  name: string
  holds: Record<string,
    { untilBlock?: number, untilTime?: number }>
  byReference?: { path: string }
}

export function register (program: Command): void {
  const s = program.command('shards').description('content-addressed shards (checkpoints, datasets, models) stored by a running peer and exchanged over the DHT')

  const add = s.command('add <file>').description('split a file into ≤ 1 MiB blocks, store them, announce the root CID in the DHT; prints the root CID')
    .option('--pin', 'keep it until unpinned (GC never removes it)')
    .option('--name <name>', 'name recorded in the manifest (default: the file name)')
    .option('--kind <kind>', 'checkpoint | dataset | model | file', 'file')
    .option('--until-block <n>', 'retain until the chain reaches block n', parseIntOption('--until-block'))
    .option('--until <time>', 'retain until this time (ISO 8601 or ms since epoch)', parseTime)
    .option('--reason <id>', 'who holds the retention (e.g. a task id)')
    .option('--by-reference', 'store only where each block is in the file, not a copy: the file must stay, unchanged, as long as the shard is served (changed or deleted → its blocks count as missing)')
  addDataDir(add, 'peer'); addJson(add)
  add.action(async (
    file: string, o: Common & { pin?: boolean, name?: string, kind: string, untilBlock?: number, until?: number, reason?: string, byReference?: boolean }
  ) => {
    const r = await call(o, async c => await c.post<{ cid: string, size: number, blocks: number }>('/v1/shards/add', {
      path: resolve(file), pin: o.pin === true, name: o.name, kind: o.kind,
      untilBlock: o.untilBlock, untilTime: o.until, reason: o.reason, byReference: o.byReference === true
    }, ADD_TIMEOUT_MS))
    if (o.json === true) printJson(r)
    else process.stdout.write(`${r.cid}\n`)
  })

  const get = s.command('get <cid>').description('fetch a shard from the swarm (several providers in parallel, every block verified), resuming what is already stored; progress on stderr')
    .option('--out <file>', 'write the content to this file (blocks go straight into it; the peer then serves the shard from the file, without a copy)')
    .option('--copy', 'with --out: keep a copy of the blocks in the shard store too (the file may then change or go away)')
    .option('--from <peerId>', 'fetch only from this provider (repeatable; default: providers found in the DHT)', collect)
    .option('--timeout <ms>', 'give up when no usable provider shows up for this long', parseIntOption('--timeout', 100, 600_000), 30_000)
    .option('--max-providers <n>', 'providers used in parallel', parseIntOption('--max-providers', 1, 32), 4)
    .option('--pin', 'pin the fetched shard')
    .option('--until-block <n>', 'retain until the chain reaches block n', parseIntOption('--until-block'))
    .option('--until <time>', 'retain until this time (ISO 8601 or ms since epoch)', parseTime)
  addDataDir(get, 'peer'); addJson(get)
  get.action(async (
    cid: string,
    o: Common & { out?: string, copy?: boolean, from?: string[], timeout: number, maxProviders: number, pin?: boolean, untilBlock?: number, until?: number }
  ) => {
    const dataDir = dataDirOf(o, 'peer')
    let control
    try { control = await readControlFiles(dataDir) } catch (err) { throw new CliError((err as Error).message) }
    const url = `http://127.0.0.1:${control.info.port}/v1/shards/get`
    const body = {
      cid, out: o.out != null ? resolve(o.out) : undefined, providers: o.from, findTimeoutMs: o.timeout,
      maxProviders: o.maxProviders, pin: o.pin === true, untilBlock: o.untilBlock, untilTime: o.until, copy: o.copy === true
    }
    let res: Response
    try {
      res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${control.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    } catch (err) {
      throw new CliError(`cannot reach the peer's control API at ${url} (${(err as Error).message}); is the peer still running?`)
    }
    if (!res.ok || res.body == null) {
      const text = await res.text()
      let msg = text
      try { msg = (JSON.parse(text) as { error: string }).error } catch {}
      throw new CliError(`shards get failed (${res.status}): ${msg}`)
    }
    let done: Record<string, unknown> | undefined
    let lastHave = 0
    let buf = ''
    const dec = new TextDecoder()
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true })
        let nl
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl)
          buf = buf.slice(nl + 1)
          if (line.trim() === '') continue
          const ev = JSON.parse(line)
          if (ev.event === 'progress') {
            lastHave = ev.haveBlocks
            const pct = ev.totalBytes > 0 ? Math.floor(ev.haveBytes / ev.totalBytes * 100) : 100
            process.stderr.write(`progress ${ev.haveBlocks}/${ev.totalBlocks} blocks ${mib(ev.haveBytes)}/${mib(ev.totalBytes)} MiB (${pct}%) providers=${ev.providers}\n`)
          } else if (ev.event === 'error') {
            throw new CliError(`cannot fetch ${cid}: ${ev.error}`)
          } else if (ev.event === 'done') {
            done = ev as Record<string, unknown>
          }
        }
      }
    } catch (err) {
      if (err instanceof CliError) throw err
      throw new CliError(`the connection to the peer broke during the fetch (${(err as Error).message}); ${lastHave} block(s) are stored, run the command again to resume`)
    }
    if (done == null) throw new CliError(`the peer stopped answering during the fetch; ${lastHave} block(s) are stored, run the command again to resume`)
    delete done.event
    if (o.json === true) { printJson(done); return }
    process.stdout.write(`${done.cid as string} ${mib(done.size as number)} MiB in ${done.blocks as number} blocks: ${done.alreadyHad as number} already here, ${done.fetchedBlocks as number} fetched in ${done.durationMs as number} ms (${done.mibPerSecond as number} MiB/s) from ${(done.providers as unknown[]).length} provider(s)${done.out != null ? ` → ${done.out as string}` : ''}\n`)
  })

  const ls = s.command('ls').description('list the shards stored by the peer')
  addDataDir(ls, 'peer'); addJson(ls)
  ls.action(async (o: Common) => {
    const roots = await call(o, async c => await c.get<ShardListing[]>('/v1/shards/ls'))
    if (o.json === true) { printJson(roots); return }
    if (roots.length === 0) { process.stdout.write('no shards stored\n'); return }
    for (const r of roots) {
      const holds = Object.entries(r.holds)
        .map(([k, h]) => `${k}:${[h.untilBlock != null ? `block ${h.untilBlock}` : '', h.untilTime != null ? new Date(h.untilTime).toISOString() : ''].filter(Boolean).join('/')}`)
      process.stdout.write(`${r.cid}  ${r.kind}  ${mib(r.size)} MiB  ${r.complete ? 'complete' : 'partial'}${r.pinned === true ? '  pinned' : ''}  ${r.name}  ${holds.join(' ')}${r.byReference != null ? `  by-reference:${r.byReference.path}` : ''}\n`)
    }
  })

  for (const [name, what] of [['pin', 'keep a shard until unpinned'], ['unpin', 'remove the pin (retention holds still apply)']] as const) {
    const c = s.command(`${name} <cid>`).description(what)
    addDataDir(c, 'peer'); addJson(c)
    c.action(async (cid: string, o: Common) => {
      const r = await call(o, async cl => await cl.post(`/v1/shards/${name}`, { cid }))
      if (o.json === true) printJson(r)
      else process.stdout.write(`${name === 'pin' ? 'pinned' : 'unpinned'} ${cid}\n`)
    })
  }

  const retain = s.command('retain <cid>').description('keep a shard until a chain block and/or a time (e.g. the end of a task\'s challenge window)')
    .option('--until-block <n>', 'chain block number', parseIntOption('--until-block'))
    .option('--until <time>', 'ISO 8601 time or ms since epoch', parseTime)
    .option('--reason <id>', 'who holds it (a task id); one hold per reason', 'default')
  addDataDir(retain, 'peer'); addJson(retain)
  retain.action(async (cid: string, o: Common & { untilBlock?: number, until?: number, reason: string }) => {
    if (o.untilBlock == null && o.until == null) throw new CliError('give --until-block and/or --until')
    const r = await call(o, async c => await c.post('/v1/shards/retain', { cid, untilBlock: o.untilBlock, untilTime: o.until, reason: o.reason }))
    if (o.json === true) printJson(r)
    else process.stdout.write(`retaining ${cid}\n`)
  })

  const rm = s.command('rm <cid>').description('remove a shard now, whatever its pin or holds (and the blocks no other shard uses); a file it was added from by reference is left alone')
  addDataDir(rm, 'peer'); addJson(rm)
  rm.action(async (cid: string, o: Common) => {
    const r = await call(o, async c => await c.post<{ removedBlocks: number, freedBytes: number, removedRefs: number }>('/v1/shards/rm', { cid }))
    if (o.json === true) printJson(r)
    else process.stdout.write(`removed ${cid}: ${r.removedBlocks} block(s) (${mib(r.freedBytes)} MiB), ${r.removedRefs} reference(s)\n`)
  })

  const gc = s.command('gc').description('delete shards no pin or active retention hold keeps, and unreferenced blocks')
    .option('--block <n>', 'current chain block (for block-number holds; default: the peer\'s chain height if known, else such holds are kept)', parseIntOption('--block'))
  addDataDir(gc, 'peer'); addJson(gc)
  gc.action(async (o: Common & { block?: number }) => {
    const r = await call(o, async c => await c.post<{ removedRoots: string[], removedBlocks: number, freedBytes: number, keptRoots: number, removedRefs?: number }>('/v1/shards/gc', { currentBlock: o.block }))
    if (o.json === true) printJson(r)
    else process.stdout.write(`removed ${r.removedRoots.length} shard(s) and ${r.removedBlocks} block(s) (${mib(r.freedBytes)} MiB)${(r.removedRefs ?? 0) > 0 ? `, ${r.removedRefs ?? 0} reference(s) (files left alone)` : ''}; kept ${r.keptRoots} shard(s)\n`)
  })
}

async function call<T> (o: Common, f: (c: ControlClient) => Promise<T>): Promise<T> {
  try {
    return await f(await ControlClient.fromDataDir(dataDirOf(o, 'peer')))
  } catch (err) { throw new CliError((err as Error).message) }
}

/** the peer reads and hashes the whole file before answering: a large file on a slow or busy disk takes minutes */
const ADD_TIMEOUT_MS = 30 * 60_000

function mib (n: number): string { return (n / 1048576).toFixed(1) }

function parseTime (v: string): number {
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v)
  if (!Number.isFinite(n)) throw new Error(`invalid time "${v}": use ISO 8601 (2025-01-31T12:00:00Z) or ms since the epoch`)
  return n
}
