// Builds the psk1 native kernels (node/train/native) during `npm ci`/`npm install`.
// A failed build does not fail the install: training on the psk1 runtime then
// uses the JavaScript kernels (the same bits, slower), and the reason is kept in
// node/train/native/build/NOT-BUILT.txt for the backend's log line.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const sources = join(dirname(fileURLToPath(import.meta.url)), '..', 'node', 'train', 'native')
// `--dir <d>`: build a copy of the sources in d instead (tests build the addon's instruction-set
// versions there, with CFLAGS='-DPSK_CLONES=...'); the package's own build is left alone
const at = process.argv.indexOf('--dir')
const dir = at > 0 ? process.argv[at + 1] : sources
if (dir !== sources) {
  mkdirSync(dir, { recursive: true })
  for (const f of readdirSync(sources)) if (/\.(c|h|gyp)$/.test(f)) copyFileSync(join(sources, f), join(dir, f))
}
const reasonFile = join(dir, 'build', 'NOT-BUILT.txt')
// Node's own headers only: node-gyp would otherwise download them from nodejs.org,
// and an install must fetch nothing but npm and Debian packages. npm's `nodedir`
// setting wins; else the running Node's prefix (official builds and Debian's
// nodejs ship include/node).
const prefix = dirname(dirname(process.execPath))
const nodedir = process.env.npm_config_nodedir || (existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined)
const r = nodedir === undefined
  ? { status: 1, error: undefined, stdout: '', stderr: `error: Node's headers are not on this machine (no ${join(prefix, 'include', 'node', 'node_api.h')}, npm nodedir not set), and the build does not download them` }
  // npm puts its bundled node-gyp on PATH for lifecycle scripts
  : spawnSync('node-gyp', ['rebuild', '-C', dir, `--nodedir=${nodedir}`], { encoding: 'utf8', shell: false })
if (r.status === 0) {
  rmSync(reasonFile, { force: true })
  console.log(`psk1 native kernels built (${dir === sources ? 'node/train/native' : dir}/build/Release/psk_kernels.node)`)
} else {
  const why = r.error !== undefined
    ? `node-gyp could not run (${r.error.message}); it comes with npm, so run this through npm (npm run build:kernels)`
    : `node-gyp rebuild failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').filter(l => /error|ERR!/i.test(l)).slice(0, 4).join(' | ') || 'see its output'} (needs python3, make and a C compiler, and Node's headers)`
  mkdirSync(dirname(reasonFile), { recursive: true })
  writeFileSync(reasonFile, why + '\n')
  console.warn(`psk1 native kernels NOT built: ${why}. Training on the psk1 runtime will use the fallback JS kernels (the same bits, slower).`)
}
