// A node process as a solver's or verifier's holds one: the tfjs wasm backend
// loaded and a chain client busy with storage reads and transfers, with a
// handler for stray rejections installed first (as node/process-policy.ts
// does). Run as a child (test/adversarial/chain-stall.test.ts) through
// vite-node, with the build (dist/) loaded by node itself:
//   <chain ws url> [max seconds]
// Prints one JSON line on stdout every 250 ms: reads and transfers that
// succeeded or failed, and every stray rejection it saw. Its chain client
// logs (JSON on stderr) when it loses and regains the chain.
import { fromDist } from '../bench/ts-script.js'

const url = process.argv[2]
const maxMs = Number(process.argv[3] ?? 120) * 1000
if (url === undefined) { process.stderr.write('usage: wasm-chain-client <chain ws url> [max seconds]\n'); process.exit(2) }

const stray: string[] = []
process.on('unhandledRejection', (reason: unknown) => { stray.push(String((reason as Error)?.message ?? reason).split('\n')[0]) })

const { initBackend } = await fromDist<typeof import('../../node/train/backend.js')>('node/train/backend.js')
const { ChainClient } = await fromDist<typeof import('../../node/chain/client.js')>('node/chain/client.js')
const { routePolkadotLogs } = await fromDist<typeof import('../../node/chain/polkadot-log.js')>('node/chain/polkadot-log.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')

const log = createLogger('wasm-chain-client', { level: 'info', pretty: false })
routePolkadotLogs(log)
const backend = await initBackend('wasm')
// a short inclusion timeout: a stalled chain outlasts it
const alice = await ChainClient.connect({ url, signer: '//Alice', timeoutMs: 1500, log })
const bob = await ChainClient.connect({ url, signer: '//Bob', log })

const n = { reads: 0, readsFailed: 0, txs: 0, txsFailed: 0 }
let lastError = ''
const end = Date.now() + maxMs
const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

async function reads (): Promise<void> {
  while (Date.now() < end) {
    const best = await alice.bestNumber().catch(() => undefined)
    const rs = await Promise.allSettled([
      alice.params(), alice.node(), alice.task(0), alice.openTasks(), alice.balance(), bob.balance(), alice.nextTaskId(),
      ...(best !== undefined ? [alice.blockHash(best).then(async h => await alice.eventsAt(h))] : [])
    ])
    for (const r of rs) {
      if (r.status === 'fulfilled') n.reads++
      else { n.readsFailed++; lastError = String((r.reason as Error)?.message ?? r.reason).split('\n')[0] }
    }
    await sleep(rs.some(r => r.status === 'rejected') ? 100 : 10)
  }
}

async function transfers (): Promise<void> {
  while (Date.now() < end) {
    try {
      await alice.transfer(bob.address, 1000n)
      n.txs++
    } catch (err) {
      n.txsFailed++
      lastError = String((err as Error)?.message ?? err).split('\n')[0]
      await sleep(100)
    }
  }
}

const report = (): void => { process.stdout.write(JSON.stringify({ ...n, stray: [...stray], lastError, backend: backend.name }) + '\n') }
const timer = setInterval(report, 250)
report()
await Promise.all([reads(), reads(), transfers(), transfers()])
clearInterval(timer)
report()
await alice.disconnect().catch(() => {})
await bob.disconnect().catch(() => {})
process.exit(0)
