import { homedir, networkInterfaces } from 'node:os'
import { join, resolve } from 'node:path'
import { Option, type Command } from 'commander'
import { startChain } from '../chain/index.js'
import { DEV_PRICE_PER_SECOND } from '../chain/dev-spec.js'
import { REFERENCE_FLOPS } from '../../protocols/scheduling/estimate.js'
import { MAX_ROOT_EVERY } from '../../protocols/pol/segments.js'
import { Overlay, Storage } from '../chain/runtime/state.js'
import { createLogger } from '../../node/log.js'
import { setProcessLog } from '../../node/process-policy.js'
import { CliError } from '../../node/cli/errors.js'

// `proofswarm chain`: the embedded TypeScript dev chain (Substrate JSON-RPC on
// 127.0.0.1). Prints the WebSocket URL once it accepts connections.

/** ws://0.0.0.0:p (or [::]) → one URL per non-internal IPv4 interface, then loopback; any other URL as is. */
export function dialableUrls (url: string): string[] {
  const u = new URL(url)
  if (u.hostname !== '0.0.0.0' && u.hostname !== '[::]') return [url]
  const lan = Object.values(networkInterfaces()).flat().filter(i => i != null && i.family === 'IPv4' && !i.internal).map(i => `ws://${i!.address}:${u.port}`)
  return [...lan, `ws://127.0.0.1:${u.port}`]
}

function int (name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v)
    if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${name} must be an integer in [${min}, ${max}], got "${v}"`)
    return n
  }
}

export function register (program: Command): void {
  const cmd = program.command('chain')
    .description('run the dev chain (Substrate JSON-RPC over WebSocket, LevelDB-persisted) and print its ws:// URL')
    .option('--port <port>', 'WebSocket port (0 = any free port)', int('--port', 0, 65535), 9944)
    .option('--host <host>', 'interface to listen on: 127.0.0.1 (this machine only), or 0.0.0.0 / a LAN address for peers on other hosts', '127.0.0.1')
    .option('--data-dir <dir>', 'chain database directory (default: ~/.proofswarm/chain)')
    .option('--block-time <ms>', 'block interval in milliseconds', int('--block-time', 10, 3_600_000), 1000)
    .option('--instant-seal', 'seal a block as soon as a transaction arrives (tests; also serves engine_createBlock)')
    .option('--unsafe-rpc', 'serve engine_createBlock on a timer chain too: anyone who reaches the RPC can then fast-forward every deadline (tests only)')
    .option('--forced-error-ppm <ppm>', 'Truebit forced-error probability per task, parts per million (new chains only)', int('--forced-error-ppm', 0, 1_000_000), 0)
    .option('--dispute-clock <blocks>', 'blocks a party forced in a dispute has to answer on chain (new chains only)', int('--dispute-clock', 2, 1_000_000), 20)
    .option('--reference-mflops <mflop/s>', 'training speed every solver is expected to reach: a task\'s solve timeout must cover its training at it twice over (new chains only)',
      int('--reference-mflops', 1, 1_000_000_000), REFERENCE_FLOPS / 1e6)
    .option('--reference-price <milliunits/s>', 'what a second of reference work pays at least, in thousandths of a unit: a task\'s solver reward must pay its training at it, its verifier reward one verifier\'s replay; 0 sets no floor (new chains only)',
      int('--reference-price', 0, 1_000_000_000), Number(DEV_PRICE_PER_SECOND / 1_000_000_000n))
    .option('--max-task-memory <MiB>', 'memory one training job of a task may need at most (new chains only)', int('--max-task-memory', 256, 1 << 24), 4096)
    .option('--max-root-every <m>', 'largest state-root spacing m a task may name (a dispute\'s defender re-runs up to m steps of a segment, a verifier replays them); 1 takes only tasks with a root after every step (new chains only)',
      int('--max-root-every', 1, MAX_ROOT_EVERY), MAX_ROOT_EVERY)
    .option('--json', 'print {"url": ...} as JSON on stdout')
    .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'))
  cmd.action(async (
    o: {
      port: number
      host: string
      dataDir?: string
      blockTime: number
      instantSeal?: boolean
      unsafeRpc?: boolean
      forcedErrorPpm: number
      disputeClock: number
      referenceMflops: number
      referencePrice: number
      maxTaskMemory: number
      maxRootEvery: number
      json?: boolean
      logLevel: string
    }
  ) => {
    const log = createLogger('chain', { level: o.logLevel })
    // a stray rejection is a JSON error line among the chain's own (node/process-policy.ts)
    setProcessLog(log)
    const dataDir = resolve(o.dataDir ?? join(homedir(), '.proofswarm', 'chain'))
    let running
    try {
      running = await startChain({
        dataDir, host: o.host, port: o.port, blockTime: o.blockTime, instantSeal: o.instantSeal === true,
        unsafeRpc: o.unsafeRpc === true, forcedErrorPpm: o.forcedErrorPpm, disputeClock: o.disputeClock, log,
        referenceFlopsPerBlock: BigInt(o.referenceMflops) * 1_000_000n * BigInt(o.blockTime) / 1000n, maxTaskMemory: BigInt(o.maxTaskMemory) * 1024n * 1024n,
        maxRootEvery: o.maxRootEvery, referenceBlockPrice: BigInt(o.referencePrice) * 1_000_000_000n * BigInt(o.blockTime) / 1000n
      })
    } catch (e) {
      const err = e as NodeJS.ErrnoException
      if (err.code === 'EADDRINUSE') throw new CliError(`port ${o.port} is already in use (try --port 0)`)
      if (err.code === 'LEVEL_DATABASE_NOT_OPEN' || /lock/i.test(String(err.cause ?? err.message))) throw new CliError(`cannot open chain database in ${dataDir}: is another chain using it? (${err.message})`)
      throw e
    }
    // a wildcard address is not dialable: print the URL of every interface peers could use
    const urls = dialableUrls(running.url)
    const info = { url: urls[0], urls, dataDir, genesis: running.chain.genesisHash, head: running.chain.headNumber }
    process.stdout.write(o.json === true ? JSON.stringify(info) + '\n' : `${urls.join('\n')}\n`)
    log.info(info, 'dev chain ready')
    const params = new Storage(running.chain.runtime.types, new Overlay(running.chain.stateReader())).read<{ forcedErrorPpm: number }>('Arbitration', 'Params')
    if (params.forcedErrorPpm === 0) {
      // without forced errors nothing but another verifier's dispute ever catches an accept given without a replay
      log.warn({ forcedErrorPpm: 0 }, 'forced errors are off on this chain: a verifier that accepts without replaying is never tested; ' +
      'start a new chain with --forced-error-ppm (docs/economics.md, "Lazy verification") for a network whose verifiers are paid')
    }
    await new Promise<void>(resolve => {
      let closing = false
      const stop = (sig: string): void => {
        if (closing) return
        closing = true
        log.info({ signal: sig }, 'closing dev chain')
        running.close().then(resolve, (e: Error) => { log.error({ err: e.message }, 'close failed'); process.exitCode = 1; resolve() })
      }
      process.once('SIGINT', () => stop('SIGINT'))
      process.once('SIGTERM', () => stop('SIGTERM'))
    })
  })
}
