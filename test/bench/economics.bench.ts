// Economics: the expected profit of each rational deviation against honest
// play, every payoff measured on the real runtime and weighed by the
// protocol's own sampling (test/adversarial/economics.test.ts, with more
// Monte-Carlo draws than the test suite uses). npm run bench -- economics
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machine, writeSection } from './report.js'

const dir = mkdtempSync(join(tmpdir(), 'ps-economics-'))
try {
  const out = join(dir, 'table.md')
  const draws = 4000
  const r = spawnSync('npx', ['vitest', 'run', 'test/adversarial/economics.test.ts'], { env: { ...process.env, ECONOMICS_DRAWS: String(draws), ECONOMICS_FIGURES: out }, stdio: 'inherit' })
  if (r.status !== 0) throw new Error('the economics simulation failed: a deviation paid, or a scenario broke')
  const table = readFileSync(out, 'utf8')
  console.log(table)
  writeSection('Economics', `
Machine: ${machine()}. Run: \`npm run bench -- economics\` (test/bench/economics.bench.ts over test/adversarial/economics.test.ts, ${draws} Monte-Carlo draws).

Dev chain parameters (slash 50 %, winner share 50 %, bond 100, jackpot 200, verifier slash 20 %, forced errors on every task as on \`npm run devnet\`) with the fixture's task (solver reward 600, verifier reward 100, stakes 10,000). Payoffs in units, each measured by running a task to its end on the pure runtime with real claims on a real tape; the expected profit is against honest play (docs/economics.md has the model and the deviations refused outright).

| deviation | honest payoff | deviant payoff (caught) | expected profit | how |
|---|---|---|---|---|
${table}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
