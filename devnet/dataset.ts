import { spawn, spawnSync } from 'node:child_process'
import { fashionAvailable, FASHION_DIR } from './scenario.js'

// The devnet trains on the real Fashion-MNIST from the Debian package
// dataset-fashion-mnist, as `npm test` does: installed here when we can (root
// with apt-get), otherwise the devnet stops with the one command that fixes
// it. Synthetic data only when asked for (--synthetic).

export const FASHION_PACKAGE = 'dataset-fashion-mnist'

export class DatasetMissing extends Error {
  constructor () {
    super(`Fashion-MNIST is not installed (${FASHION_DIR}). Install it with:\n  sudo apt-get install -y ${FASHION_PACKAGE}\nor run the devnet on made-up data with --synthetic`)
    this.name = 'DatasetMissing'
  }
}

async function aptGet (args: string[], say: (m: string) => void): Promise<boolean> {
  return await new Promise(resolve => {
    const p = spawn('apt-get', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    let last = Date.now()
    const progress = (d: Buffer): void => {
      const line = d.toString().trim().split('\n').pop() ?? ''
      if (line !== '' && Date.now() - last > 2000) { last = Date.now(); say(`  apt-get: ${line.slice(0, 120)}`) }
    }
    p.stdout.on('data', progress); p.stderr.on('data', progress)
    p.on('error', () => resolve(false))
    p.on('close', code => resolve(code === 0))
  })
}

/** Makes sure the real dataset is there; throws DatasetMissing with the command to run when it cannot install it. */
export async function ensureFashion (say: (m: string) => void): Promise<void> {
  if (fashionAvailable()) return
  const root = process.getuid?.() === 0
  const apt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0
  if (!root || !apt) throw new DatasetMissing()
  say(`Fashion-MNIST is missing: installing the Debian package ${FASHION_PACKAGE}…`)
  if (!await aptGet(['install', '-y', FASHION_PACKAGE], say)) {
    say('  apt-get install failed; refreshing the package lists and trying again…')
    if (await aptGet(['update'], say)) await aptGet(['install', '-y', FASHION_PACKAGE], say)
  }
  if (!fashionAvailable()) throw new DatasetMissing()
  say(`Fashion-MNIST installed in ${FASHION_DIR}`)
}
