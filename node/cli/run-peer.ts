import type { Role } from '../config.js'
import { Peer, type PeerOptions } from '../peer.js'
import { createLogger } from '../log.js'
import { setProcessLog } from '../process-policy.js'
import { defaultServices } from '../services.js'
import type { RolesInit } from '../roles/install.js'
import { CliError } from './errors.js'
import { joinHint, loopbackWarning } from './join-hint.js'
import { printJson } from './options.js'

export interface RunPeerOptions extends Omit<PeerOptions, 'logger'> {
  json?: boolean
  roles?: Role[]
  chain?: RolesInit
  /** the chain URL the bootstrap's join command names (it need not use the chain itself) */
  hintChainUrl?: string
}

/**
 * Starts a long-running peer, prints how to reach it, and stops it cleanly on
 * SIGINT/SIGTERM (libp2p stopped, LevelDB closed, control files removed).
 */
export async function runPeer (opts: RunPeerOptions): Promise<Peer> {
  const log = createLogger(opts.kind, { level: opts.logLevel })
  // stray rejections are logged as JSON with the peer's other lines (node/process-policy.ts)
  setProcessLog(log)
  let peer: Peer
  try {
    peer = await Peer.start({ services: defaultServices(opts.chain), ...opts, logger: log })
  } catch (err) {
    throw new CliError((err as Error).message, 2)
  }
  const s = peer.status()
  const hint = opts.kind === 'bootstrap' ? joinHint({ listenAddrs: s.listenAddrs, network: s.network, privateAddrs: s.privateAddrs.kept, chainUrl: opts.hintChainUrl ?? opts.chain?.chainUrl }) : undefined
  if (s.privateAddrs.warning != null) process.stderr.write(`\nWARNING: ${s.privateAddrs.warning}\n\n`)
  if (hint?.warning != null) process.stderr.write(`WARNING: ${hint.warning}\n`)
  const lonely = opts.kind === 'peer' ? loopbackWarning(s.listenAddrs, opts.bootstrap) : undefined
  if (lonely != null) { peer.log.warn(lonely); process.stderr.write(`\nWARNING: ${lonely}\n\n`) }
  if (opts.json === true) {
    printJson({ event: 'ready', peerId: s.peerId, multiaddrs: s.listenAddrs, roles: s.roles, network: s.network, dataDir: opts.dataDir, chain: opts.chain?.chainUrl ?? null, privateAddrs: s.privateAddrs.kept, ...(hint != null ? { join: hint.command } : {}) })
  } else {
    process.stdout.write(`${opts.kind === 'bootstrap' ? 'bootstrap peer' : 'peer'} ${s.peerId} ready on network "${s.network}"\n`)
    process.stdout.write(`dialable multiaddrs:\n${s.listenAddrs.map(a => '  ' + a).join('\n')}\n`)
    if (hint != null) process.stdout.write(`another host joins with:\n  ${hint.command}\n`)
  }
  let signalled = false
  const shutdown = (sig: string): void => {
    if (signalled) { log.warn('second signal: exiting now'); process.exit(130) }
    signalled = true
    log.info(`received ${sig}, stopping`)
    const force = setTimeout(() => { log.error('shutdown took over 10 s, exiting'); process.exit(1) }, 10_000)
    force.unref()
    void peer.stop().then(() => { clearTimeout(force); process.exit(0) })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  return peer
}
