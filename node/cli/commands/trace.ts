import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import type { TraceEntry } from '../../../actors/trace.js'
import { ROLES } from '../../config.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, parseIntOption } from '../options.js'

const TRACE_ROLES: string[] = [...ROLES, 'supervisor']

/** "10m", "2h", "30s", an ISO date, or ms since the epoch. */
export function parseSince (s: string, now = Date.now()): number {
  const rel = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(s)
  if (rel != null) {
    const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 'ms']
    return Math.round(now - Number(rel[1]) * mult)
  }
  if (/^\d+$/.test(s)) return Number(s)
  const t = Date.parse(s)
  if (!Number.isFinite(t)) throw new Error(`--since must be a duration (30s, 10m, 2h), an ISO date or ms since the epoch, got "${s}"`)
  return t
}

export function formatEntry (e: TraceEntry): string {
  const t = new Date(e.time).toISOString().slice(11, 23)
  const change = e.kind === 'transition' || e.kind === 'stopped' ? `${e.from ?? '∅'} → ${e.to ?? '∅'}` : e.kind === 'spawned' ? 'spawned' : `(stays ${e.to ?? ''})`
  const detail = e.detail != null ? ' ' + JSON.stringify(e.detail) : ''
  return `${t} ${e.actorId.padEnd(16)} ${e.event.padEnd(24)} ${change}${detail}`
}

export function register (program: Command): void {
  const cmd = program.command('trace')
    .description('show a running peer\'s actor state traces (every event and transition)')
    .option('--actor <id>', 'only this actor (e.g. solver#1, supervisor)')
    .option('--role <role>', 'only actors of this role')
    .option('--since <time>', 'only entries since a duration ago (10m), an ISO date or epoch ms')
    .option('--limit <n>', 'at most this many past entries', parseIntOption('--limit', 1, 100_000), 1000)
    .option('--follow', 'keep streaming new entries (Ctrl-C stops)')
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (o: { actor?: string, role?: string, since?: string, limit: number, follow?: boolean, dataDir?: string, json?: boolean }) => {
    // a filter nothing can match is a mistake, not an empty answer
    if (o.role != null && !TRACE_ROLES.includes(o.role)) throw new CliError(`--role ${o.role}: no such role; roles are ${TRACE_ROLES.join(', ')}`, 2)
    const params = new URLSearchParams()
    if (o.actor != null) params.set('actor', o.actor)
    if (o.role != null) params.set('role', o.role)
    try { if (o.since != null) params.set('since', String(parseSince(o.since))) } catch (err) { throw new CliError((err as Error).message, 2) }
    params.set('limit', String(o.limit))
    const print = (e: TraceEntry): void => { process.stdout.write((o.json === true ? JSON.stringify(e) : formatEntry(e)) + '\n') }
    let c: ControlClient
    try { c = await ControlClient.fromDataDir(dataDirOf(o, 'peer')) } catch (err) { throw new CliError((err as Error).message) }
    if (o.follow !== true) {
      try {
        for (const e of await c.get<TraceEntry[]>(`/v1/traces?${params}`)) print(e)
      } catch (err) { throw new CliError((err as Error).message) }
      return
    }
    if (!params.has('since')) params.set('since', String(Date.now() - 60_000))
    await followStream(c, `/v1/traces/stream?${params}`, print)
  })
}

async function followStream (c: ControlClient, path: string, print: (e: TraceEntry) => void): Promise<void> {
  const ac = new AbortController()
  process.once('SIGINT', () => ac.abort())
  let res: Response
  try {
    res = await fetch(c.baseUrl + path, { headers: { authorization: `Bearer ${c.token}` }, signal: ac.signal })
  } catch (err) { throw new CliError(`cannot reach the peer: ${(err as Error).message}`) }
  if (!res.ok || res.body == null) throw new CliError(`trace stream failed (${res.status}): ${await res.text()}`)
  const dec = new TextDecoder()
  let buf = ''
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += dec.decode(chunk, { stream: true })
      let i
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i)
        buf = buf.slice(i + 2)
        const data = block.split('\n').filter(l => l.startsWith('data: ')).map(l => l.slice(6)).join('\n')
        if (data !== '') print(JSON.parse(data) as TraceEntry)
      }
    }
  } catch (err) {
    if (!ac.signal.aborted) throw new CliError(`trace stream ended: ${(err as Error).message}`)
  }
  // the peer ended the stream: it stopped (or is restarting); following on silently would look like a quiet peer
  if (!ac.signal.aborted) throw new CliError('trace stream ended: the peer closed it (it stopped or is restarting)')
}
