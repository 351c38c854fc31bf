import * as tf from '@tensorflow/tfjs'

// The Emscripten start-up code of @tensorflow/tfjs-backend-wasm 4.22 (the
// Node branch of its module factory, run when the backend initialises) adds
//   process.on('uncaughtException', ex => { if (!(ex instanceof ExitStatus)) throw ex })
//   process.on('unhandledRejection', reason => { throw reason })
// and never takes them off: its _dispose keeps "the listeners added" with
// `!before.indexOf(l) > -1`, true for every listener, and tfjs never calls it.
// With them, any promise rejection nobody awaited (a chain query failing as
// the WebSocket drops) is rethrown and kills the whole process, whatever
// handler the process installed itself. The threaded build also sets
// process.exitCode from its quit_ (threads are off here, but it is undone too).
// The backend's factory is wrapped, so whatever initialises it (initBackend,
// a direct tf.setBackend('wasm'), tfjs picking its best backend on first use)
// takes off exactly the listeners added while it ran.

/** The process events whose listeners a backend's start-up may not leave behind. */
export const GUARDED_EVENTS = ['unhandledRejection', 'uncaughtException', 'exit', 'beforeExit'] as const

type Listener = (...args: unknown[]) => void
type GuardedEvent = typeof GUARDED_EVENTS[number]
// process.listeners / removeListener typed for these events alike
const listenersOf = (e: GuardedEvent): Listener[] => process.listeners(e as 'exit') as Listener[]
const remove = (e: GuardedEvent, l: Listener): void => { process.removeListener(e as 'exit', l) }

/**
 * Runs `init`, then removes the process listeners of GUARDED_EVENTS added
 * meanwhile and restores process.exitCode; returns how many it removed.
 * Nothing else should add process listeners while a backend starts (the
 * node's own are installed at start-up, before any backend).
 */
export async function withoutAddedListeners<T> (init: () => Promise<T>): Promise<{ value: T, removed: number }> {
  const before = new Map(GUARDED_EVENTS.map(e => [e, new Set(listenersOf(e))]))
  const exitCode = process.exitCode
  const restore = (): number => {
    let removed = 0
    for (const e of GUARDED_EVENTS) {
      for (const l of listenersOf(e)) {
        if (!before.get(e)!.has(l)) { remove(e, l); removed++ }
      }
    }
    process.exitCode = exitCode
    return removed
  }
  let value: T
  try {
    value = await init()
  } catch (err) {
    restore()
    throw err
  }
  return { value, removed: restore() }
}

const guarded = new Set<string>()

/** Wraps the registered factory of backend `name` (once) so its start-up leaves no process listeners. */
export function guardBackendInit (name: string): void {
  if (guarded.has(name)) return
  const entry = tf.engine().registryFactory[name]
  if (entry === undefined) throw new Error(`no tfjs backend "${name}" is registered`)
  const factory = entry.factory
  entry.factory = async () => (await withoutAddedListeners(async () => await factory())).value
  guarded.add(name)
}
