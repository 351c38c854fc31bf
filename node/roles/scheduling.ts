import type { RolePorts } from '../../actors/ports.js'
import { validateProgram } from '../../protocols/program/program.js'
import type { ChainClient } from '../chain/client.js'
import type { Peer } from '../peer.js'
import type { ShardService } from '../shards/index.js'
import { PeerScheduler, defaultLimits, type SchedulerOptions, type ValidProgram } from './job-scheduler.js'
import type { TaskBook } from './task-book.js'
import { MAX_PROGRAM_FETCH_BYTES } from '../../protocols/verification/fetch-limits.js'
import { WASM_PSK_RUNTIME } from '../../protocols/program/runtime.js'
import { pskAddonMissing } from '../train/psk-available.js'

// Puts a peer's training and replays under its job scheduler, and shows the
// scheduler on the control API (/v1/jobs: `proofswarm status` and `tasks`)
// and in /metrics.

export interface SchedulingDeps { chain: () => Promise<ChainClient>, book: TaskBook, shards: ShardService }

export function scheduledPorts<T extends RolePorts> (peer: Peer, ports: T, deps: SchedulingDeps, opts: SchedulerOptions = {}): T {
  const limits = defaultLimits(opts)
  const log = peer.log.child({ component: 'scheduler' })
  const program = async (taskId: number): Promise<ValidProgram> => {
    const rec = await deps.book.waitFor(taskId, r => r.task != null, 30_000, 'task announcement')
    return validateProgram(JSON.parse(new TextDecoder().decode(await deps.shards.fetchBytes(rec.task!.programCid, { maxBytes: MAX_PROGRAM_FETCH_BYTES }))))
  }
  const s = new PeerScheduler(limits, { chain: deps.chain, program, log, registry: peer.metrics.registry })
  peer.onStop(() => { s.stop() })
  peer.control.get('/v1/jobs', () => s.view())
  log.info({ maxJobs: limits.maxJobs, maxJobMemoryMiB: Math.round(limits.maxMemory / 2 ** 20) }, 'job scheduler limits')
  // task new's default runtime is psk1: without its addon this peer trains and replays those tasks in JavaScript
  const noAddon = pskAddonMissing(WASM_PSK_RUNTIME)
  if (noAddon !== undefined) log.warn({ reason: noAddon }, `no usable psk1 addon: ${WASM_PSK_RUNTIME} tasks (task new's default) would be trained and verified here with the JavaScript kernels, far slower, and may miss their deadlines: build it with npm run build:kernels`)
  // the chain takes tasks up to its max_task_memory: a peer that gives a job less hands such tasks back, paying the release fee
  void deps.chain().then(async chain => await chain.params()).then(p => {
    const chainMax = Number(p.maxTaskMemory)
    if (limits.maxMemory < chainMax) {
      log.warn({ maxJobMemoryMiB: Math.round(limits.maxMemory / 2 ** 20), chainMaxTaskMemoryMiB: Math.round(chainMax / 2 ** 20) },
        'this peer gives a job less memory than the chain lets a task need: as a solver it hands back (and pays the release fee for) tasks between the two; raise --max-job-memory or run on a larger machine')
    }
  }, () => {})
  return s.wrap(ports)
}
