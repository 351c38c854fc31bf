// A process that runs several proofswarm peers for the swarm scale bench, so
// that 100 peers fit on a 2-core machine (one process per peer costs ~0.4 s
// of CPU to start and a V8/Node baseline each). Every peer is what
// `proofswarm join` runs (node/cli/run-peer.ts): Peer.start with the default
// services, its own identity, LevelDB, libp2p host, TCP port on 127.0.0.1 and
// control API; the bench reads it through that control API as for a CLI peer.
//
// Protocol, one JSON object per line: stdin {"op":"start","dataDir","bootstrap"}
// → stdout {"dataDir","ready":{peerId,multiaddrs},"startedAtMs"} or {"dataDir","error"};
// the first line out is {"hello":{"rssMiB"}} (the process baseline, before any peer).
// SIGTERM stops every peer cleanly and exits. Run natively (nativeScriptArgs):
// its RSS is measured.
import { createInterface } from 'node:readline'
import { fromDist } from './ts-script.js'

await fromDist('node/polyfill.js')
const { tunePeerHeap } = await fromDist<typeof import('../../node/cli/peer-heap.js')>('node/cli/peer-heap.js')
tunePeerHeap() // as the CLI does for `join`, before libp2p loads
const { Peer } = await fromDist<typeof import('../../node/peer.js')>('node/peer.js')
const { defaultServices } = await fromDist<typeof import('../../node/services.js')>('node/services.js')
const { createLogger } = await fromDist<typeof import('../../node/log.js')>('node/log.js')

type PeerT = Awaited<ReturnType<typeof Peer.start>>
const peers: PeerT[] = []
const send = (o: unknown): void => { process.stdout.write(JSON.stringify(o) + '\n') }

let stopping = false
const shutdown = (): void => {
  if (stopping) process.exit(130)
  stopping = true
  const force = setTimeout(() => process.exit(1), 15_000)
  force.unref()
  void Promise.allSettled(peers.map(async p => await p.stop())).then(() => process.exit(0))
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
// the bench gone (stdin closed): stop too, never linger
process.stdin.on('end', shutdown)

global.gc?.()
send({ hello: { rssMiB: process.memoryUsage().rss / 2 ** 20, pid: process.pid } })

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line) as { op: string, dataDir: string, bootstrap: string }
  if (cmd.op !== 'start' || stopping) continue
  const startedAtMs = Math.round(performance.now())
  void Peer.start({
    kind: 'peer',
    dataDir: cmd.dataDir,
    listen: ['/ip4/127.0.0.1/tcp/0'],
    bootstrap: [cmd.bootstrap],
    bootstrapAttempts: 8,
    services: defaultServices({}),
    logger: createLogger('peer', { level: 'warn' })
  }).then(p => {
    peers.push(p)
    const s = p.status()
    send({ dataDir: cmd.dataDir, startedAtMs, ready: { peerId: s.peerId, multiaddrs: s.listenAddrs } })
  }, (err: Error) => send({ dataDir: cmd.dataDir, error: err.message }))
}
