import type { Command } from 'commander'
import { DEFAULT_NETWORK, parseRoles } from '../../config.js'
import { CliError } from '../errors.js'
import { parseNodeFaults } from '../../dispute/faults.js'
import { addChainOptions, chainInit, addDataDir, addJson, addLogLevel, collect, dataDirOf, parseIntOption } from '../options.js'

function stepsOpt (v: string | undefined, name: string): number | undefined {
  if (v == null) return undefined
  if (v === 'all') return Number.MAX_SAFE_INTEGER
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliError(`${name} must be a positive integer or "all", got "${v}"`, 2)
  return Number(v)
}

function disputeInit (o: { fault?: string[], verifySteps?: string, recheckSteps?: string, disputeForceAfter?: number }): {
  faults?: string[]
  recheckSteps?: number
  disputeForceAfterMs?: number
  economics?: { stepsPerVerifier: number }
} {
  try { parseNodeFaults(o.fault ?? []) } catch (err) { throw new CliError((err as Error).message, 2) }
  const v = stepsOpt(o.verifySteps, '--verify-steps')
  return { faults: o.fault, recheckSteps: stepsOpt(o.recheckSteps, '--recheck-steps'), disputeForceAfterMs: o.disputeForceAfter != null ? o.disputeForceAfter * 1000 : undefined, ...(v != null ? { economics: { stepsPerVerifier: v } } : {}) }
}

export function register (program: Command): void {
  const cmd = program.command('join')
    .description('join a swarm through one or more bootstrap peers')
    .requiredOption('--bootstrap <multiaddr>', 'bootstrap peer multiaddr with /p2p/<id> (repeatable)', collect)
    .option('--roles <roles>', 'comma-separated roles: submitter,solver,verifier,whistleblower (stored; default: the stored roles)')
    .option('--listen <multiaddr>', 'address to listen on (repeatable; default /ip4/0.0.0.0/tcp/0: every interface, so peers on other hosts can fetch from this one)', collect)
    .option('--private-addrs', 'keep loopback and private addresses in DHT records: for a LAN or one-machine swarm (default: only when every address of this peer is private)')
    .option('--no-private-addrs', 'drop loopback and private addresses from DHT records: for a public swarm')
    .option('--network <name>', 'swarm name used in gossip topics', DEFAULT_NETWORK)
    .option('--control-port <port>', 'control API port on 127.0.0.1 (default: a free port, recorded in the data dir)', parseIntOption('--control-port', 0, 65535))
    .option('--bootstrap-retries <n>', 'dial attempts (exponential backoff) before giving up', parseIntOption('--bootstrap-retries', 1, 100), 5)
  // ---- disputes ----
  cmd.option('--fault <spec>', 'FAULT INJECTION for tests/devnet (repeatable): tamper-op=<kernel>@<step>, tamper-weight[@<step>], lie-in-bisection, silent, short-segment, bad-checkpoint, withhold-dataset', collect)
    .option('--verify-steps <n|all>', 'steps a verifier samples and replays (default: its share of the task\'s verifiers of a sample that catches a solver faking ≥ 10% of its steps with 99% probability)')
    .option('--recheck-steps <n|all>', 'steps a whistleblower samples and replays (default all)')
    .option('--dispute-force-after <s>', 'seconds a dispute party waits for the other\'s off-chain answer before forcing its move on chain (default 20)', parseIntOption('--dispute-force-after', 1, 3600))
  cmd.option('--max-jobs <n>', 'training and replay jobs run at once; the rest wait in a queue (default: the number of cores)', parseIntOption('--max-jobs', 1, 1024))
    .option('--max-job-memory <MiB>', 'memory the running jobs may use together, in MiB, from each job\'s estimate (default: half the machine\'s memory)', parseIntOption('--max-job-memory', 64, 16 * 1024 * 1024))
  addChainOptions(cmd)
  addDataDir(cmd, 'peer'); addJson(cmd); addLogLevel(cmd)
  cmd.action(async (
    o: {
      bootstrap: string[]
      roles?: string
      listen?: string[]
      network: string
      controlPort?: number
      bootstrapRetries: number
      dataDir?: string
      json?: boolean
      logLevel: string
      chain?: string
      account?: string
      stake?: string
      datasetDir?: string
      fault?: string[]
      verifySteps?: string
      recheckSteps?: string
      disputeForceAfter?: number
      privateAddrs?: boolean
      maxJobs?: number
      maxJobMemory?: number
    }
  ) => {
    let roles
    try { roles = o.roles == null ? undefined : parseRoles(o.roles) } catch (err) { throw new CliError((err as Error).message, 2) }
    // loaded on use: libp2p and friends cost ~0.5 s of startup for every other command
    const { runPeer } = await import('../run-peer.js')
    await runPeer({
      kind: 'peer',
      dataDir: dataDirOf(o, 'peer'),
      listen: o.listen ?? ['/ip4/0.0.0.0/tcp/0'],
      privateNetwork: o.privateAddrs,
      bootstrap: o.bootstrap,
      roles,
      network: o.network,
      controlPort: o.controlPort,
      bootstrapAttempts: o.bootstrapRetries,
      logLevel: o.logLevel,
      json: o.json,
      chain: { ...chainInit(o), ...disputeInit(o), jobs: { maxJobs: o.maxJobs, maxJobMemory: o.maxJobMemory != null ? o.maxJobMemory * 2 ** 20 : undefined } }
    })
  })
}
