import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { formatTty, InstallProgress, parseAptStatus, type InstallEvent } from '../../../scripts/apt-progress.mjs'
import { installFashion } from '../../../devnet/dataset.js'
import type { ProgressItem } from '../../../devnet/progress.js'
import { tempDir } from '../../helpers/procs.js'

// Progress while the dataset installs (scripts/ensure-dataset.mjs, run by `npm test` and by the
// devnet): apt-get's status lines parsed into a bar with ETA, JSON events when not on a terminal.
// The package is installed on this machine, so the install itself is a fake apt-get on PATH
// (the one fault here we cannot cause otherwise); everything around it is the real code.

const SCRIPT = resolve('scripts/ensure-dataset.mjs')

// a fake apt-get: writes status lines to the descriptor named by -o APT::Status-Fd=N, like apt-get does,
// creates the dataset file, logs its arguments; FAKE_APT_FAIL makes `install` fail as an unknown package does
const FAKE_APT = `#!/bin/sh
echo "$@" >> "$FAKE_APT_LOG"
fd=""
for a in "$@"; do case "$a" in APT::Status-Fd=*) fd="\${a#APT::Status-Fd=}";; esac; done
case " $* " in *" update "*) exit 0;; esac
if [ -n "$FAKE_APT_FAIL" ]; then echo "E: Unable to locate package dataset-fashion-mnist" >&2; exit 100; fi
s() { if [ -n "$fd" ]; then eval "echo \\"\\$1\\" >&$fd"; fi; }
s "dlstatus:1:0:Retrieving file 1 of 1"
sleep 0.2
s "dlstatus:1:60:Retrieving file 1 of 1 (2,345 kB/s)"
s "not a status line"
s "dlstatus:1:100:Retrieving file 1 of 1"
s "pmstatus:dataset-fashion-mnist:20:Preparing to unpack dataset-fashion-mnist"
sleep 0.2
s "pmstatus:dataset-fashion-mnist:60:Unpacking dataset-fashion-mnist"
mkdir -p "$PROOFSWARM_FASHION_MNIST" && : > "$PROOFSWARM_FASHION_MNIST/train-images-idx3-ubyte.gz"
s "pmstatus:dataset-fashion-mnist:100:Installed dataset-fashion-mnist"
echo "Setting up dataset-fashion-mnist"
`

async function fakeApt (dir: string, fail = false): Promise<NodeJS.ProcessEnv> {
  const bin = join(dir, 'bin')
  await mkdir(bin, { recursive: true })
  await writeFile(join(bin, 'apt-get'), FAKE_APT)
  await chmod(join(bin, 'apt-get'), 0o755)
  return { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PROOFSWARM_FASHION_MNIST: join(dir, 'fashion'), FAKE_APT_LOG: join(dir, 'apt.log'), ...(fail ? { FAKE_APT_FAIL: '1' } : {}) }
}

async function run (args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const c = spawn(process.execPath, [SCRIPT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''; let stderr = ''
  c.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  c.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>(resolve => c.on('close', resolve))
  return { code, stdout, stderr }
}

const events = (text: string): InstallEvent[] => text.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as InstallEvent & { event: string }).filter(e => (e as { event?: string }).event === 'dataset-install')

describe('apt-get status lines', () => {
  it('parses dlstatus and pmstatus lines (text may hold colons), errors, and ignores anything else', () => {
    expect(parseAptStatus('dlstatus:1:12.5:Retrieving file 1 of 2 (3 kB/s)')).toEqual({ kind: 'dlstatus', item: '1', percent: 12.5, text: 'Retrieving file 1 of 2 (3 kB/s)' })
    expect(parseAptStatus('pmstatus:dataset-fashion-mnist:40:Unpacking: dataset-fashion-mnist\n')).toEqual({ kind: 'pmstatus', item: 'dataset-fashion-mnist', percent: 40, text: 'Unpacking: dataset-fashion-mnist' })
    expect(parseAptStatus('pmerror:/var/cache/apt/archives/x.deb:50:trying to overwrite')).toEqual({ kind: 'pmerror', item: '/var/cache/apt/archives/x.deb', text: '50:trying to overwrite' })
    for (const bad of ['', 'hello', 'dlstatus:1:abc:x', 'dlstatus:1:101:x', 'dlstatus:1:-1:x', 'dlstatus:1::x', 'pmstatus:pkg:50', 'status:pkg:50:x', 'dlstatus']) expect(parseAptStatus(bad), bad).toBeUndefined()
  })

  it('makes one fraction that never goes back, with an ETA from the time so far', () => {
    let t = 0
    const p = new InstallProgress('pkg', () => t)
    t = 10_000
    const a = p.update(parseAptStatus('dlstatus:1:50:Retrieving'))!
    expect(a).toMatchObject({ phase: 'download', percent: 25, etaSec: 30 }) // a quarter in 10 s: 30 s left
    t = 20_000
    expect(p.update(parseAptStatus('pmstatus:pkg:0:Preparing'))).toMatchObject({ phase: 'install', percent: 50, etaSec: 20 })
    // apt restarts its percentage for a later stage: the bar stays where it was
    expect(p.update(parseAptStatus('dlstatus:1:10:Retrieving'))!.percent).toBe(50)
    t = 30_000
    expect(p.update(parseAptStatus('pmstatus:pkg:100:Installed'))).toMatchObject({ phase: 'install', percent: 100 })
    expect(p.update(parseAptStatus('pmstatus:pkg:100:Installed'))!.etaSec).toBeUndefined()
    expect(p.update(parseAptStatus('pmerror:pkg:1:broken'))).toMatchObject({ phase: 'error', text: '1:broken' })
    expect(p.update(undefined)).toBeUndefined()
    // nothing to download: dpkg is the whole bar
    const q = new InstallProgress('pkg', () => t)
    expect(q.update(parseAptStatus('pmstatus:pkg:40:Unpacking'))!.percent).toBe(40)
    expect(formatTty({ package: 'pkg', phase: 'install', percent: 40, etaSec: 7, text: '' })).toBe('pkg ████████░░░░░░░░░░░░ 40% installing ETA 7 s')
  })
})

describe('scripts/ensure-dataset.mjs with a fake apt-get', () => {
  it('installs a missing dataset and reports JSON progress events when stderr is not a terminal', async () => {
    expect(process.getuid?.(), 'the install path runs as root (as here and in CI)').toBe(0)
    const dir = await tempDir('ps-dataset-')
    try {
      const env = await fakeApt(dir.path)
      const r = await run(['--only', 'dataset-fashion-mnist'], env)
      expect(r.code, r.stderr).toBe(0)
      const ev = events(r.stderr)
      expect(ev[0]).toMatchObject({ package: 'dataset-fashion-mnist', phase: 'start' })
      expect(ev[0].text).toContain('Fashion-MNIST is missing')
      const bars = ev.filter(e => e.phase === 'download' || e.phase === 'install')
      expect(bars.map(e => e.percent)).toEqual([0, 30, 50, 60, 80, 100])
      expect(bars.some(e => typeof e.etaSec === 'number' && e.etaSec >= 0)).toBe(true)
      expect(ev[ev.length - 1]).toMatchObject({ phase: 'done', percent: 100 })
      expect(existsSync(join(dir.path, 'fashion', 'train-images-idx3-ubyte.gz'))).toBe(true)
      // apt-get was asked to write its status lines to descriptor 3
      expect(await readFile(join(dir.path, 'apt.log'), 'utf8')).toContain('-o APT::Status-Fd=3 install -y --no-install-recommends dataset-fashion-mnist')
      // installed now: nothing to do, nothing printed
      const again = await run(['--only', 'dataset-fashion-mnist'], env)
      expect([again.code, again.stderr]).toEqual([0, ''])
    } finally { await dir.cleanup() }
  })

  it('when apt-get cannot install it: refreshes the lists, retries, then stops with the exact command (exit 1)', async () => {
    const dir = await tempDir('ps-dataset-')
    try {
      const r = await run(['--json', '--only', 'dataset-fashion-mnist'], await fakeApt(dir.path, true))
      expect(r.code).toBe(1)
      expect(events(r.stdout).map(e => e.phase)).toEqual(['start', 'retry', 'failed', 'missing'])
      expect(events(r.stdout)[2].text).toContain('Unable to locate package dataset-fashion-mnist')
      expect(r.stderr).toContain('Install it with: sudo apt-get install -y dataset-fashion-mnist')
      expect((await readFile(join(dir.path, 'apt.log'), 'utf8')).trim().split('\n').map(l => l.split(' ').slice(2, 3)[0])).toEqual(['install', 'update', 'install'])
    } finally { await dir.cleanup() }
  })

  it('the devnet turns the same events into its progress bar with ETA and its log lines', async () => {
    const dir = await tempDir('ps-dataset-')
    const saved = { ...process.env }
    try {
      Object.assign(process.env, await fakeApt(dir.path))
      const said: string[] = []
      const shown: Array<ProgressItem | undefined> = []
      const failure = await installFashion(m => said.push(m), (key, item) => { expect(key).toBe('dataset'); shown.push(item) }, SCRIPT)
      expect(failure).toBeUndefined()
      expect(said[0]).toContain('installing the Debian package dataset-fashion-mnist')
      expect(said[said.length - 1]).toBe('dataset-fashion-mnist installed')
      const items = shown.filter((i): i is ProgressItem => i != null)
      expect(items.map(i => i.fraction)).toEqual([0, 0.3, 0.5, 0.6, 0.8, 1])
      expect(items[1].text).toMatch(/^downloading dataset-fashion-mnist 30%/)
      expect(shown[shown.length - 1]).toBeUndefined() // the bar is removed at the end
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) Reflect.deleteProperty(process.env, k)
      Object.assign(process.env, saved)
      await dir.cleanup()
    }
  })
})
