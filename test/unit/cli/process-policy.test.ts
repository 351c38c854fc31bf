import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

// node/process-policy.ts in a process of its own (as every proofswarm command
// installs it): a stray rejection is logged and counted and the process goes
// on, with the wasm backend loaded too; an uncaught exception ends it with
// code 1 and one clear line.

const url = (p: string): string => JSON.stringify(pathToFileURL(resolve('dist', p)).href)

function run (body: string): { status: number | null, stdout: string, stderr: string } {
  const script = `
    const { installProcessPolicy, strayRejections } = await import(${url('node/process-policy.js')})
    installProcessPolicy('policy-test')
    ${body}
  `
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('the node processes\' policy for errors nobody handled', () => {
  it('a stray rejection is logged with a clear message and counted; the process keeps running, the wasm backend loaded', () => {
    const r = run(`
      const { initBackend } = await import(${url('node/train/backend.js')})
      Promise.reject(new Error('first stray'))
      await new Promise(resolve => setTimeout(resolve, 50))
      await initBackend('wasm')
      Promise.reject(new Error('second stray, after the backend started'))
      await new Promise(resolve => setTimeout(resolve, 50))
      process.stdout.write(JSON.stringify(strayRejections()) + '\\n')
    `)
    expect(r.status, r.stderr).toBe(0)
    const s = JSON.parse(r.stdout) as { count: number, last: { message: string, at: string } }
    expect(s.count).toBe(2)
    expect(s.last.message).toBe('Error: second stray, after the backend started')
    expect(r.stderr).toMatch(/policy-test: warning: unhandled promise rejection #1 .*keeps running.*first stray/)
    expect(r.stderr).toMatch(/unhandled promise rejection #2 .*second stray/)
  })

  it('with the peer\'s logger set, a stray rejection is a JSON error line', () => {
    const r = run(`
      const { setProcessLog } = await import(${url('node/process-policy.js')})
      const { createLogger } = await import(${url('node/log.js')})
      setProcessLog(createLogger('peer', { pretty: false }))
      Promise.reject(new Error('stray'))
      await new Promise(resolve => setTimeout(resolve, 50))
    `)
    expect(r.status, r.stderr).toBe(0)
    const line = r.stderr.split('\n').find(l => l.includes('unhandled promise rejection'))
    expect(line, r.stderr).toBeDefined()
    const j = JSON.parse(line!) as { level: number, unhandledRejections: number, err: { message: string } }
    expect(j.level).toBe(50)
    expect(j.unhandledRejections).toBe(1)
    expect(j.err.message).toBe('stray')
  })

  it('an uncaught exception exits with code 1 and says so', () => {
    const r = run(`
      setTimeout(() => { throw new Error('a bug in a timer') }, 10)
      setTimeout(() => { process.stdout.write('still running\\n') }, 2000)
    `)
    expect(r.status).toBe(1)
    expect(r.stdout).not.toContain('still running')
    expect(r.stderr).toMatch(/policy-test: fatal: uncaught exception, exiting with code 1 .*Error: a bug in a timer/)
  })
})
