// Writes one section of docs/benchmarks.md (between markers), leaving the
// other sections as they are, so each benchmark updates only its own figures.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpus, totalmem } from 'node:os'

const FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'benchmarks.md')

export function machine (): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`
}

export function writeSection (heading: string, body: string): void {
  mkdirSync(dirname(FILE), { recursive: true })
  let doc = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '# Benchmarks\n\nRun with `npm run bench` (all) or `npm run bench -- <name> [args]` (test/bench/<name>.bench.ts, TypeScript run by vite-node after a build; docs/architecture.md). Figures are from the latest run on the machine named in each section; ratios are measured side by side in one run, since these machines are shared and noisy.\n'
  const start = `<!-- bench:${heading} -->`
  const end = `<!-- /bench:${heading} -->`
  const section = `${start}\n## ${heading}\n\n${body.trim()}\n${end}`
  const i = doc.indexOf(start)
  const j = doc.indexOf(end)
  if (i >= 0 && j > i) doc = doc.slice(0, i) + section + doc.slice(j + end.length)
  else doc = doc.trimEnd() + '\n\n' + section + '\n'
  writeFileSync(FILE, doc)
}

export function pct (xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]
}
