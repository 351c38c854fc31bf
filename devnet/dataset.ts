import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fashionAvailable, FASHION_DIR } from './scenario.js'
import type { ProgressItem } from './progress.js'

// The devnet trains on the real Fashion-MNIST from the Debian package
// dataset-fashion-mnist, as `npm test` does: installed here when we can (root
// with apt-get), otherwise the devnet stops with the one command that fixes
// it. Synthetic data only when asked for (--synthetic). The install is the
// same script `npm test` runs (scripts/ensure-dataset.mjs); its JSON events
// become the devnet's progress (a bar with ETA on a terminal, JSON lines with --json).

export const FASHION_PACKAGE = 'dataset-fashion-mnist'

export class DatasetMissing extends Error {
  constructor (detail?: string) {
    super(`Fashion-MNIST is not installed (${FASHION_DIR}). Install it with:\n  sudo apt-get install -y ${FASHION_PACKAGE}\nor run the devnet on made-up data with --synthetic${detail != null ? `\n(${detail})` : ''}`)
    this.name = 'DatasetMissing'
  }
}

const here = dirname(fileURLToPath(import.meta.url))
// next to the sources under tsx, or two levels up from dist/devnet
const SCRIPT_PATHS = [resolve(here, '../scripts/ensure-dataset.mjs'), resolve(here, '../../scripts/ensure-dataset.mjs')]

export type ShowProgress = (key: string, item: ProgressItem | undefined, data: Record<string, unknown>) => void
interface InstallEvent { package?: string, phase?: string, percent?: number, etaSec?: number, text?: string }

/** Runs the install script, turning its events into progress; resolves with its last failure text, if any. */
export async function installFashion (
  say: (m: string) => void, show?: ShowProgress, script = SCRIPT_PATHS.find(p => existsSync(p))
): Promise<string | undefined> {
  if (script == null) return `scripts/ensure-dataset.mjs not found (looked in ${SCRIPT_PATHS.join(', ')})`
  return await new Promise(resolve => {
    const p = spawn(process.execPath, [script, '--json', '--only', FASHION_PACKAGE], { stdio: ['ignore', 'pipe', 'pipe'] })
    let failure: string | undefined
    let buf = ''
    p.stdout.setEncoding('utf8')
    p.stdout.on('data', (d: string) => {
      buf += d
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1)
        let ev: InstallEvent
        try { ev = JSON.parse(line) as InstallEvent } catch { continue }
        const text = typeof ev.text === 'string' ? ev.text.slice(0, 300) : ''
        if (ev.phase === 'download' || ev.phase === 'install') {
          show?.('dataset', { label: 'dataset install', fraction: typeof ev.percent === 'number' ? ev.percent / 100 : undefined, etaSec: ev.etaSec, text: `${ev.phase === 'download' ? 'downloading' : 'installing'} ${ev.package ?? ''} ${ev.percent ?? '?'}%${ev.etaSec != null ? `, ETA ${ev.etaSec} s` : ''}` }, { package: ev.package, phase: ev.phase, percent: ev.percent, etaSec: ev.etaSec })
        } else if (text !== '') {
          if (ev.phase === 'failed' || ev.phase === 'missing') failure = text
          say(ev.phase === 'start' || ev.phase === 'retry' || ev.phase === 'done' ? text : `  apt-get: ${text}`)
        }
      }
      if (buf.length > 64 * 1024) buf = ''
    })
    p.stderr.resume()
    p.on('error', err => resolve(err.message))
    p.on('close', () => { show?.('dataset', undefined, {}); resolve(failure) })
  })
}

/** Makes sure the real dataset is there; throws DatasetMissing with the command to run when it cannot install it. */
export async function ensureFashion (say: (m: string) => void, show?: ShowProgress): Promise<void> {
  if (fashionAvailable()) return
  const root = process.getuid?.() === 0
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0
  if (!root || !apt) throw new DatasetMissing()
  say(`Fashion-MNIST is missing (${FASHION_DIR})`)
  const failure = await installFashion(say, show)
  if (!fashionAvailable()) throw new DatasetMissing(failure)
  say(`Fashion-MNIST installed in ${FASHION_DIR}`)
}
