import { isAbsolute } from 'node:path'
import { HttpError, type ControlServer } from '../control/server.js'
import { SHARD_KINDS, type ShardKind } from '../../protocols/shards/index.js'
import type { RetentionHold, ShardService } from './service.js'

// Control API for `proofswarm shards ...`. Paths are read and written by the
// peer process itself (the control API is loopback-only and token-guarded,
// and the CLI runs as the same user), so they must be absolute.

export function installShardRoutes (c: ControlServer, shards: ShardService): void {
  c.post('/v1/shards/add', async ({ body }) => {
    const b = obj(body)
    const path = str(b.path, 'path')
    if (!isAbsolute(path)) throw new HttpError(400, '"path" must be absolute')
    const kind = b.kind == null ? 'file' : str(b.kind, 'kind')
    if (!SHARD_KINDS.includes(kind as ShardKind)) throw new HttpError(400, `"kind" must be one of ${SHARD_KINDS.join(', ')}`)
    return await wrap(async () => await shards.addFile(path, { name: optStr(b.name, 'name'), kind: kind as ShardKind }, {
      pin: b.pin === true, retain: hold(b), reason: optStr(b.reason, 'reason'), byReference: b.byReference === true
    }))
  })

  // streams NDJSON: {"event":"progress",...} lines, then {"event":"done",...} or {"event":"error",...}
  c.post('/v1/shards/get', async ({ body, res }) => {
    const b = obj(body)
    const cid = str(b.cid, 'cid')
    const out = optStr(b.out, 'out')
    if (out != null && !isAbsolute(out)) throw new HttpError(400, '"out" must be absolute')
    const providers = b.providers == null ? undefined : (Array.isArray(b.providers) ? b.providers.map(p => str(p, 'providers[]')) : bad('"providers" must be a list of peer ids'))
    const findTimeoutMs = optInt(b.findTimeoutMs, 'findTimeoutMs', 100, 600_000)
    const maxProviders = optInt(b.maxProviders, 'maxProviders', 1, 32)
    const abort = new AbortController()
    res.on('close', () => { if (!res.writableFinished) abort.abort() })
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    const send = (v: unknown): void => { if (!res.writableEnded) res.write(JSON.stringify(v) + '\n') }
    let last = 0
    try {
      const opts = {
        signal: abort.signal,
        providers,
        findTimeoutMs,
        maxProviders,
        pin: b.pin === true,
        retain: hold(b),
        onProgress: (p: { haveBlocks: number, totalBlocks: number }) => {
          const now = Date.now()
          if (now - last < 200 && p.haveBlocks < p.totalBlocks) return
          last = now
          send({ event: 'progress', ...p })
        }
      }
      const r = out != null ? await shards.fetchToFile(cid, out, { ...opts, copy: b.copy === true }) : await shards.fetch(cid, opts)
      send({ event: 'done', ...r })
    } catch (err) {
      send({ event: 'error', error: (err as Error).message, name: (err as Error).name })
    }
    res.end()
    return undefined
  })

  c.get('/v1/shards/ls', async () => await shards.list())
  c.post('/v1/shards/pin', async ({ body }) => await wrap(async () => await shards.pin(str(obj(body).cid, 'cid'))))
  c.post('/v1/shards/unpin', async ({ body }) => await wrap(async () => await shards.unpin(str(obj(body).cid, 'cid'))))
  c.post('/v1/shards/retain', async ({ body }) => {
    const b = obj(body)
    const h = hold(b)
    if (h == null) throw new HttpError(400, 'give "untilBlock" and/or "untilTime"')
    return await wrap(async () => await shards.retain(str(b.cid, 'cid'), h, optStr(b.reason, 'reason')))
  })
  c.post('/v1/shards/rm', async ({ body }) => await wrap(async () => await shards.remove(str(obj(body).cid, 'cid'))))
  c.post('/v1/shards/gc', async ({ body }) => {
    const b = obj(body)
    return await shards.gc({ currentBlock: optInt(b.currentBlock, 'currentBlock', 0, Number.MAX_SAFE_INTEGER) ?? shards.chainHeight() })
  })
}

type Body = Record<string, unknown>

function obj (body: unknown): Body {
  if (body == null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'body must be a JSON object')
  return body as Body
}
function bad (msg: string): never { throw new HttpError(400, msg) }
function str (v: unknown, name: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 4096) bad(`"${name}" must be a non-empty string`)
  return v
}
function optStr (v: unknown, name: string): string | undefined { return v == null ? undefined : str(v, name) }
function optInt (v: unknown, name: string, min: number, max: number): number | undefined {
  if (v == null) return undefined
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(`"${name}" must be an integer in [${min}, ${max}]`)
  return v
}
function hold (b: Body): RetentionHold | undefined {
  const untilBlock = optInt(b.untilBlock, 'untilBlock', 0, Number.MAX_SAFE_INTEGER)
  const untilTime = optInt(b.untilTime, 'untilTime', 0, Number.MAX_SAFE_INTEGER)
  return untilBlock == null && untilTime == null ? undefined : { untilBlock, untilTime }
}
// service errors on bad input (unknown CID, missing file...) are the caller's fault
async function wrap<T> (f: () => Promise<T>): Promise<T> {
  try { return await f() } catch (err) { throw new HttpError(400, (err as Error).message) }
}
