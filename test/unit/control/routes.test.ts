import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveRoutes, type Endpoint, type RouteDefinitions } from '../../../node/control/routes.js'
import { ControlServer, HttpError } from '../../../node/control/server.js'
import { rolesRoutes } from '../../../node/roles/api/routes.js'

// Declared endpoints are served with their parsed bodies; a body the
// declaration refuses is a 400 naming what is wrong, and never reaches the handler.

interface TestEndpoints {
  ping: Endpoint<undefined, { pong: boolean }>
  double: Endpoint<{ n: number }, { twice: number }>
}

const routes: RouteDefinitions<TestEndpoints> = {
  ping: { method: 'GET', path: '/v1/ping' },
  double: {
    method: 'POST',
    path: '/v1/double',
    parse: b => {
      if (typeof b.n !== 'number') throw new HttpError(400, '"n" must be a number')
      return { n: b.n }
    }
  }
}

const token = 'test-token'
let server: ControlServer
let base: string
const handled: unknown[] = []

beforeAll(async () => {
  server = new ControlServer(token)
  serveRoutes(server, routes, {
    ping: () => ({ pong: true }),
    double: args => { handled.push(args); return { twice: args.n * 2 } }
  })
  base = `http://127.0.0.1:${await server.listen(0)}`
})
afterAll(async () => { await server?.close() })

async function call (method: string, path: string, body?: unknown): Promise<{ status: number, json: any }> {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, json: await res.json() }
}

describe('declared control API routes', () => {
  it('serve each endpoint at its method and path, with the parsed body', async () => {
    expect(await call('GET', '/v1/ping')).toEqual({ status: 200, json: { pong: true } })
    expect(await call('POST', '/v1/double', { n: 21, extra: 'ignored' })).toEqual({ status: 200, json: { twice: 42 } })
    expect(handled).toEqual([{ n: 21 }])
    expect((await call('POST', '/v1/ping', {})).status).toBe(405)
  })

  it('answer a body the declaration refuses with a 400 naming it; the handler never sees it', async () => {
    expect(await call('POST', '/v1/double', { n: 'x' })).toEqual({ status: 400, json: { error: '"n" must be a number' } })
    expect(handled).toEqual([{ n: 21 }])
  })
})

describe('the roles\' /v1/submit declaration', () => {
  const parse = rolesRoutes.submit.parse
  const refused = (body: Record<string, unknown>): string => {
    try { parse(body) } catch (err) { expect(err).toBeInstanceOf(HttpError); expect((err as HttpError).status).toBe(400); return (err as Error).message }
    throw new Error('accepted')
  }

  it('refuses a missing or invalid program and non-object economics, naming each', () => {
    expect(refused({})).toBe('body must be {"program": <task program>}')
    expect(refused({ program: { version: -1 } })).toMatch(/^invalid task program: /)
    expect(refused({ program: {}, economics: [] })).toBe('economics must be an object')
    expect(refused({ program: {}, economics: 5 })).toBe('economics must be an object')
  })
})
