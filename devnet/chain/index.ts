import { mkdir } from 'node:fs/promises'
import type { Logger } from '../../node/log.js'
import { DevChain } from './chain.js'
import { devGenesis, type DevSpecOptions } from './dev-spec.js'
import { RpcServer } from './rpc-server.js'
import type { ReferenceSemantics } from './runtime/adjudication.js'

export { DevChain } from './chain.js'
export { RpcServer } from './rpc-server.js'
export { devGenesis, DEV_ACCOUNTS, UNIT } from './dev-spec.js'

export interface StartChainOptions extends DevSpecOptions {
  dataDir: string
  host?: string
  port?: number
  blockTime?: number
  instantSeal?: boolean
  /** serve engine_createBlock even on a timer chain (tests only); instant-seal chains always do */
  unsafeRpc?: boolean
  reference?: ReferenceSemantics
  /** signature-verification worker threads; default PROOFSWARM_CHAIN_VERIFY_WORKERS or cores − 1 (1..4) */
  verifyWorkers?: number
  log?: Logger
}

export interface RunningChain {
  url: string
  chain: DevChain
  server: RpcServer
  close: () => Promise<void>
}

/** Loads the reference semantics from protocols/reference if it is built; adjudication needs it. */
export async function loadReference (log?: Logger): Promise<ReferenceSemantics | undefined> {
  try {
    const mod = await import('../../protocols/reference/index.js' as string) as ReferenceSemantics
    if (typeof mod.computeElement === 'function' && typeof mod.elementOperands === 'function') return mod
  } catch (e) {
    log?.warn({ err: (e as Error).message }, 'protocols/reference not available: adjudicate will reject claims with UnsupportedKernel')
  }
  return undefined
}

export async function startChain (o: StartChainOptions): Promise<RunningChain> {
  await mkdir(o.dataDir, { recursive: true })
  const genesis = await devGenesis(o)
  const reference = o.reference ?? await loadReference(o.log)
  const chain = new DevChain({
    dataDir: o.dataDir, genesis, reference, blockTime: o.blockTime, instantSeal: o.instantSeal, verifyWorkers: o.verifyWorkers, log: o.log
  })
  await chain.start()
  const server = new RpcServer(chain, { host: o.host, port: o.port, log: o.log, unsafeRpc: o.instantSeal === true || o.unsafeRpc === true })
  let url: string
  try {
    url = await server.listen()
  } catch (e) {
    await chain.close()
    throw e
  }
  return {
    url,
    chain,
    server,
    close: async () => {
      await server.close()
      await chain.close()
    }
  }
}
