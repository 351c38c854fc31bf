import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// The V8 heap settings a peer applies at start (node/cli/peer-heap.ts), checked in
// fresh processes (V8 flags are process-wide): which flags are set, and that an
// operator's own setting or the opt-out wins. (What they do is measured by
// test/bench/shards-fetch-to-file.bench.mjs transfer, side by side.)
const MOD = join(process.cwd(), 'dist/node/cli/peer-heap.js')

function run (env: Record<string, string | undefined>, execArgv: string[] = []): { set: string[] } {
  if (!existsSync(MOD)) throw new Error(`${MOD} missing: run npm run build`)
  const code = `
    const { tunePeerHeap } = await import(${JSON.stringify(MOD)})
    process.stdout.write(JSON.stringify({ set: tunePeerHeap() }))`
  const out = execFileSync(process.execPath, [...execArgv, '--input-type=module', '-e', code], { env: { ...process.env, PROOFSWARM_PEER_HEAP: undefined, PROOFSWARM_YOUNG_GEN: undefined, NODE_OPTIONS: undefined, ...env }, encoding: 'utf8' })
  return JSON.parse(out)
}

describe('peer heap settings', () => {
  it('a peer gets a 1 MiB young generation, V8 optimizing for size, and 200% old-generation growth around transfers', () => {
    expect(run({}).set).toEqual(['--semi-space-growth-factor=1', '--optimize-for-size', '--heap-growing-percent=200@transfers'])
  })

  it('an explicit setting is left alone, the others still applied', () => {
    expect(run({}, ['--heap-growing-percent=50']).set).toEqual(['--semi-space-growth-factor=1', '--optimize-for-size'])
    expect(run({ NODE_OPTIONS: '--max-semi-space-size=8' }).set).toEqual(['--optimize-for-size', '--heap-growing-percent=200@transfers'])
    expect(run({}, ['--no-optimize-for-size']).set).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=200@transfers'])
  })

  it('PROOFSWARM_PEER_HEAP=default (or the older PROOFSWARM_YOUNG_GEN=default) keeps V8\'s defaults', () => {
    expect(run({ PROOFSWARM_PEER_HEAP: 'default' }).set).toEqual([])
    expect(run({ PROOFSWARM_YOUNG_GEN: 'default' }).set).toEqual([])
  })
})
