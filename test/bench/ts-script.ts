// How a benchmark runs a TypeScript script: through vite-node, with dist/
// loaded by node itself (never transformed by vite), so a bench measures the
// build exactly as the CLI runs it: worker threads, wasm files and engine
// processes are found next to the module that starts them. A process whose
// own memory or heap a bench measures (its RSS, its GC under the peer heap
// settings) runs natively instead: vite-node adds ~45 MiB to a process.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { build } from 'esbuild'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(BENCH_DIR, '..', '..')
const VITE_NODE = join(ROOT, 'node_modules', 'vite-node', 'vite-node.mjs')

/** node arguments that run `file` (a .ts script) with `args`; node flags (e.g. --cpu-prof) go in `nodeArgs`. */
export function tsScriptArgs (file: string, args: string[] = [], nodeArgs: string[] = []): string[] {
  return [...nodeArgs, VITE_NODE, '--options.deps.external=/dist/', file, '--', ...args]
}

/** Imports a module of the build (dist/<path>.js), typed by its source: `fromDist<typeof import('../../node/x.js')>('node/x.js')`. */
export async function fromDist<M> (path: string): Promise<M> {
  return await import(pathToFileURL(join(ROOT, 'dist', path)).href) as M
}

/**
 * node arguments that run `file` (a .ts script) in node alone: the script and
 * the scripts it imports relatively are bundled by esbuild into one ES module
 * (packages and dist/ stay imports node resolves), written under
 * node_modules/.cache (so that packages resolve from it) by content hash;
 * argv[1] and import.meta.url are those of `file` in every bundled script
 * (keep them in test/bench), as when it runs as a script.
 */
export async function nativeScriptArgs (file: string, args: string[] = [], nodeArgs: string[] = []): Promise<string[]> {
  const url = pathToFileURL(file).href
  const out = await build({
    entryPoints: [file], bundle: true, write: false, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    define: { 'import.meta.url': JSON.stringify(url) },
    banner: { js: `process.argv[1] = ${JSON.stringify(file)};` },
    logLevel: 'error'
  })
  const code = out.outputFiles[0].text
  const dir = join(ROOT, 'node_modules', '.cache', 'proofswarm-bench')
  const bundle = join(dir, `${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`)
  if (!existsSync(bundle)) { mkdirSync(dir, { recursive: true }); writeFileSync(bundle, code) }
  return [...nodeArgs, bundle, ...args]
}
