import { spawnSync } from 'node:child_process'
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as tf from '@tensorflow/tfjs'
import { initBackend } from '../../../node/train/backend.js'
import { GUARDED_EVENTS, withoutAddedListeners } from '../../../node/train/wasm-listeners.js'

// The wasm backend's Emscripten start-up adds process listeners that rethrow
// every unhandled rejection and uncaught exception (node/train/wasm-listeners.ts);
// after the backend starts none may be left, and a stray rejection must not
// end a process that handles them itself.

const sources = (e: typeof GUARDED_EVENTS[number]): string[] => process.listeners(e as 'exit').map(l => l.toString())
/** the Emscripten listeners' bodies: `throw reason` / `instanceof ExitStatus` */
const EMSCRIPTEN = /throw reason|instanceof ExitStatus/

describe('wasm backend start-up and process listeners', () => {
  it('leaves no listener of its own: the process\'s own ones (vitest\'s) are all that remain', async () => {
    const before = new Map(GUARDED_EVENTS.map(e => [e, sources(e)]))
    await initBackend('wasm')
    expect(tf.getBackend()).toBe('wasm')
    for (const e of GUARDED_EVENTS) {
      expect(sources(e).filter(s => EMSCRIPTEN.test(s)), e).toEqual([])
      expect(sources(e), e).toEqual(before.get(e))
    }
  })

  it('removes exactly the listeners added while a start-up ran, and restores process.exitCode', async () => {
    const mine = (): void => {}
    process.on('unhandledRejection', mine)
    const code = process.exitCode
    try {
      const { value, removed } = await withoutAddedListeners(async () => {
        process.on('unhandledRejection', (r: unknown) => { throw r })
        process.on('uncaughtException', (e: Error) => { throw e })
        process.exitCode = 7
        return 42
      })
      expect(value).toBe(42)
      expect(removed).toBe(2)
      expect(process.listeners('unhandledRejection')).toContain(mine)
      expect(process.exitCode).toBe(code)
      expect(sources('unhandledRejection').filter(s => /throw r\b/.test(s))).toEqual([])
    } finally {
      process.removeListener('unhandledRejection', mine)
    }
  })

  it('a process that loaded the backend and handles stray rejections itself outlives one', () => {
    // a fresh process (this one's backend is already up): its own handler first, as node/process-policy.ts installs it
    const backend = pathToFileURL(resolve('dist/node/train/backend.js')).href
    const script = `
      let seen = 0
      process.on('unhandledRejection', () => { seen++ })
      const { initBackend } = await import(${JSON.stringify(backend)})
      await initBackend('wasm')
      Promise.reject(new Error('stray'))
      setTimeout(() => { process.stdout.write('alive after ' + seen + ' stray rejection(s)\\n') }, 200)
    `
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
    expect(r.stderr).not.toMatch(/Error: stray/)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain('alive after 1 stray rejection(s)')
  })
})
