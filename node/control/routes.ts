import type { ControlServer, RequestContext } from './server.js'

// Typed control API routes, declarations apart from handlers (as Lodestar
// keeps its API definitions apart from their implementations): a group of
// endpoints is declared once — method, path, how its body is parsed, what
// it answers — and served from a map of handlers the compiler checks
// against those declarations.

/** One endpoint: the arguments its handler gets (the parsed body) and what it answers. */
export interface Endpoint<Args = undefined, Resp = unknown> { args: Args, resp: Resp }

/** A group of endpoints by name (an interface: `interface XEndpoints { a: Endpoint<...>, ... }`). */
export type EndpointMap<Es> = { [K in keyof Es]: Endpoint<unknown, unknown> }

interface RouteBase { method: 'GET' | 'POST', path: string }

/**
 * The declaration of one endpoint. A POST with arguments parses them from
 * its body (always a JSON object: the server refuses anything else), and
 * throws an HttpError(400) naming what is wrong.
 */
export type RouteDefinition<E extends Endpoint<unknown, unknown>> = RouteBase & (E['args'] extends undefined
  ? { method: 'GET' | 'POST', parse?: undefined }
  : { method: 'POST', parse: (body: Record<string, unknown>) => E['args'] })

export type RouteDefinitions<Es extends EndpointMap<Es>> = { [K in keyof Es]: RouteDefinition<Es[K]> }

/** Handlers of a declared group; a handler returns undefined after writing the response itself (streams). */
export type Handlers<Es extends EndpointMap<Es>> = { [K in keyof Es]: (args: Es[K]['args'], ctx: RequestContext) => Promise<Es[K]['resp']> | Es[K]['resp'] }

/** Registers every declared endpoint of a group with its handler. */
export function serveRoutes<Es extends EndpointMap<Es>> (c: ControlServer, defs: RouteDefinitions<Es>, handlers: Handlers<Es>): void {
  for (const name of Object.keys(defs) as Array<keyof Es & string>) {
    const def = defs[name] as RouteBase & { parse?: (body: Record<string, unknown>) => unknown }
    const handle = handlers[name]
    const run = async (ctx: RequestContext): Promise<unknown> => await handle((def.parse?.(ctx.body as Record<string, unknown>)) as Es[typeof name]['args'], ctx)
    if (def.method === 'GET') c.get(def.path, run)
    else c.post(def.path, run)
  }
}
