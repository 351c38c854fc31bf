// Builds the psk1 native kernels (node/train/native) during `npm ci`/`npm install`.
// A failed build does not fail the install: training on the psk1 runtime then
// uses the JavaScript kernels (the same bits, slower), and the reason is kept in
// node/train/native/build/NOT-BUILT.txt for the backend's log line.
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'node', 'train', 'native')
const reasonFile = join(dir, 'build', 'NOT-BUILT.txt')
// npm puts its bundled node-gyp on PATH for lifecycle scripts; outside npm, try npx's
const r = spawnSync('node-gyp', ['rebuild', '-C', dir], { encoding: 'utf8', shell: false })
if (r.status === 0) {
  rmSync(reasonFile, { force: true })
  console.log('psk1 native kernels built (node/train/native/build/Release/psk_kernels.node)')
} else {
  const why = r.error !== undefined
    ? `node-gyp could not run (${r.error.message}); it comes with npm, so run this through npm (npm run build:kernels)`
    : `node-gyp rebuild failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').filter(l => /error|ERR!/i.test(l)).slice(0, 4).join(' | ') || 'see its output'} (needs python3, make and a C compiler, and Node's headers)`
  mkdirSync(dirname(reasonFile), { recursive: true })
  writeFileSync(reasonFile, why + '\n')
  console.warn(`psk1 native kernels NOT built: ${why}. Training on the psk1 runtime will use the fallback JS kernels (the same bits, slower).`)
}
