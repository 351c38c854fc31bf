import type { ApiPromise } from '@polkadot/api'
import { hexToU8a, u8aToHex } from '@polkadot/util'
import { toPlain } from './plain.js'
import type { AvailabilityChallenge, AvailabilityServe, ChunkRequest, DatasetChallenge, DisputeInfo, DrawRequest, NodeInfo, Params, TaskAssignments, TaskInfo, VerifierAssignment } from '../../protocols/pallet-types.js'
import { eventOf, type ChainEvent } from './client-types.js'
import { sha256 } from '../../protocols/commit/merkle.js'

// The chain client's reads: blocks, accounts and the Arbitration pallet's
// storage, as plain values (the base of ChainClient).

export class ChainQueries {
  constructor (readonly api: ApiPromise, readonly accountId: string) {}

  async bestNumber (): Promise<number> { return (await this.api.rpc.chain.getHeader()).number.toNumber() }
  async finalizedNumber (): Promise<number> {
    return (await this.api.rpc.chain.getHeader(await this.api.rpc.chain.getFinalizedHead())).number.toNumber()
  }

  async blockHash (n: number): Promise<string> { return (await this.api.rpc.chain.getBlockHash(n)).toHex() }

  async balance (who = this.accountId): Promise<{ free: bigint, reserved: bigint }> {
    const a = toPlain(await this.api.query.system.account(who)) as { data: { free: bigint, reserved: bigint } }
    return { free: a.data.free, reserved: a.data.reserved }
  }

  async params (): Promise<Params> { return toPlain(await this.api.query.arbitration.params()) as unknown as Params }
  async node (who = this.accountId): Promise<NodeInfo | null> { return toPlain(await this.api.query.arbitration.nodes(who)) as unknown as NodeInfo | null }
  /** The runtimes (ids) the node declared it runs among those that need a declaration (set_runtimes). */
  async nodeRuntimes (who = this.accountId): Promise<string[]> {
    return (toPlain(await this.api.query.arbitration.nodeRuntimes(who)) as string[]).map(h => Buffer.from(h.slice(2), 'hex').toString('utf8'))
  }

  async task (id: bigint | number): Promise<TaskInfo | null> { return toPlain(await this.api.query.arbitration.tasks(id)) as unknown as TaskInfo | null }
  /**
   * The task's program as its submitter posted it (the `program` of its submit_task extrinsic, in the
   * block of the task's created_at): canonical JSON bytes hashing to the task's program_hash, or null.
   * What a verifier replays when the published run is withheld.
   */
  async taskProgram (id: bigint | number): Promise<Uint8Array | null> {
    const t = await this.task(id)
    if (t == null) return null
    const block = await this.api.rpc.chain.getBlock(await this.blockHash(t.createdAt))
    for (const ex of block.block.extrinsics) {
      if (ex.method.section !== 'arbitration' || ex.method.method !== 'submitTask') continue
      const bytes = ex.method.args[1].toU8a(true)
      if (u8aToHex(sha256(bytes)) === t.programHash) return bytes
    }
    return null
  }

  /** The task's state-root spacing m (TaskRootEvery; 1 when absent: a root after every step). */
  async rootEvery (taskId: bigint | number): Promise<number> {
    const v = toPlain(await this.api.query.arbitration.taskRootEvery(taskId)) as number | null
    return v == null ? 1 : Number(v)
  }

  /** The chain's request for the solver's forced-error draw before it pays the task (null: none open or the task settled). */
  async drawRequest (taskId: bigint | number): Promise<DrawRequest | null> {
    return toPlain(await this.api.query.arbitration.drawRequests(taskId)) as unknown as DrawRequest | null
  }

  /** The verifiers the chain drew for a task, every round (null before the first draw). */
  async assignments (taskId: bigint | number): Promise<TaskAssignments | null> {
    return toPlain(await this.api.query.arbitration.assignments(taskId)) as unknown as TaskAssignments | null
  }

  /** This account's live assignment on a task, if the chain drew it and it is not over. */
  async myAssignment (taskId: bigint | number, who = this.accountId): Promise<VerifierAssignment | null> {
    return (await this.assignments(taskId))?.verifiers.find(v => v.verifier === who && v.status === 'Active') ?? null
  }

  async dispute (id: bigint | number): Promise<DisputeInfo | null> {
    return toPlain(await this.api.query.arbitration.disputes(id)) as unknown as DisputeInfo | null
  }

  /** Id the next submitted task will get: every task id below it exists. */
  async nextTaskId (): Promise<bigint> { return BigInt(toPlain(await this.api.query.arbitration.nextTaskId()) as bigint) }
  async openTasks (): Promise<bigint[]> { return toPlain(await this.api.query.arbitration.openTasks()) as bigint[] }
  /** Owner account (hex) of a libp2p peer id, or null. */
  async peerOwner (peerId: string): Promise<string | null> {
    return toPlain(await this.api.query.arbitration.peerOwner(u8aToHex(new TextEncoder().encode(peerId)))) as string | null
  }

  /** Events of one block. */
  async eventsAt (blockHash: string): Promise<ChainEvent[]> {
    const at = await this.api.at(blockHash)
    const n = (await this.api.rpc.chain.getHeader(blockHash)).number.toNumber()
    const records = await at.query.system.events()
    return (records as unknown as Array<Parameters<typeof eventOf>[0]>).map(r => eventOf(r, blockHash, n))
  }

  // ---- disputes ----
  /** The genesis hash every dispute message is signed over (with the task and dispute ids). */
  get genesisHash (): string { return this.api.genesisHash.toHex() }

  /** The last dispute message on chain (protocols/dispute encodeSigned bytes), or null. */
  async disputeLastMove (id: bigint | number): Promise<Uint8Array | null> {
    const v = await this.api.query.arbitration.disputeLastMove(id) as unknown as { isSome: boolean, unwrap: () => { toU8a: (bare: boolean) => Uint8Array } }
    return v.isSome ? v.unwrap().toU8a(true) : null
  }

  // ---- data-availability challenges (docs/disputes.md, "Withheld checkpoints") ----
  async availabilityChallenge (id: bigint | number): Promise<AvailabilityChallenge | null> {
    return toPlain(await this.api.query.arbitration.availabilityChallenges(id)) as unknown as AvailabilityChallenge | null
  }

  /** How far a challenged checkpoint is served on chain (protocols/availability/serve.ts), or null before its first part. */
  async availabilityServe (id: bigint | number): Promise<AvailabilityServe | null> {
    type Stored = Omit<AvailabilityServe, 'servedAs'> & { servedAs: bigint | number }
    const p = toPlain(await this.api.query.arbitration.availabilityServes(id)) as Stored | null
    if (p == null) return null
    return { served: Number(p.served), total: Number(p.total), headersHash: p.headersHash, parts: p.parts.map(Number), servedAs: Number(p.servedAs) }
  }

  /**
   * The parts of a challenge's serve as the chain took them (the AvailabilityServed events of
   * the blocks its progress names), in order: what a served challenger rebuilds its checkpoint from.
   */
  async servedParts (id: bigint | number): Promise<Uint8Array[]> {
    const p = await this.availabilityServe(id)
    if (p == null) return []
    const out: Uint8Array[] = []
    for (const n of [...new Set(p.parts)]) {
      for (const e of await this.eventsAt(await this.blockHash(n))) {
        if (e.section === 'arbitration' && e.method === 'AvailabilityServed' && Number(e.data.challengeId) === p.servedAs) out.push(hexToU8a(String(e.data.response)))
      }
    }
    return out
  }

  /** Checkpoints of a task served on chain: step → an answered challenge of it (until the task ends). */
  async servedCheckpoints (taskId: bigint | number): Promise<Map<number, number>> {
    const out = new Map<number, number>()
    for (const id of toPlain(await this.api.query.arbitration.answeredAvailability(taskId)) as Array<bigint | number>) {
      const c = await this.availabilityChallenge(id)
      if (c != null && c.status === 'Answered') out.set(Number(c.checkpointStep), Number(id))
    }
    return out
  }

  /** A dataset challenge (docs/economics.md "A withheld dataset"), or null. */
  async datasetChallenge (id: bigint | number): Promise<DatasetChallenge | null> {
    const c = toPlain(await this.api.query.arbitration.datasetChallenges(id)) as unknown as DatasetChallenge | null
    return c == null ? null : { ...c, steps: c.steps.map(Number) }
  }

  /** Ids of a task's open dataset challenges. */
  async openDatasetChallenges (taskId: bigint | number): Promise<number[]> {
    return (toPlain(await this.api.query.arbitration.openDatasetChallenges(taskId)) as Array<bigint | number>).map(Number)
  }

  /** Ids of a task's answered dataset challenges (until the task ends and their deposits are settled). */
  async answeredDatasetChallenges (taskId: bigint | number): Promise<number[]> {
    return (toPlain(await this.api.query.arbitration.answeredDatasetChallenges(taskId)) as Array<bigint | number>).map(Number)
  }

  /**
   * The parts of a dataset challenge's serve as the chain took them (its DatasetServed events, in
   * order), read block by block from its opening until every served row is found: what the
   * challenger replays from (protocols/availability servedBatches checks them).
   */
  async datasetServedParts (id: bigint | number): Promise<Uint8Array[]> {
    const c = await this.datasetChallenge(id)
    if (c == null || c.served === 0) return []
    const out: Uint8Array[] = []
    let rows = 0
    const best = await this.bestNumber()
    for (let n = c.openedAt; n <= best && rows < c.served; n++) {
      for (const e of await this.eventsAt(await this.blockHash(n))) {
        if (e.section !== 'arbitration' || e.method !== 'DatasetServed' || Number(e.data.challengeId) !== Number(id)) continue
        out.push(hexToU8a(String(e.data.part)))
        rows = Number(e.data.from) + Number(e.data.rows)
      }
    }
    return out
  }

  /** (checkpoint step, challenge id) of every open availability challenge of a task. */
  async openAvailability (taskId: bigint | number): Promise<Array<[number, number]>> {
    return (toPlain(await this.api.query.arbitration.openAvailability(taskId)) as Array<[number, bigint | number]>).map(([s, id]) => [Number(s), Number(id)])
  }

  // ---- chunk sampling of erasure-coded checkpoints (docs/protocol.md §5, "Chunk sampling") ----
  async chunkRequest (id: bigint | number): Promise<ChunkRequest | null> {
    return toPlain(await this.api.query.arbitration.chunkRequests(id)) as unknown as ChunkRequest | null
  }

  /** (checkpoint step, request id) of every open chunk-sample request of a task. */
  async openChunkRequests (taskId: bigint | number): Promise<Array<[number, number]>> {
    return (toPlain(await this.api.query.arbitration.openChunkRequests(taskId)) as Array<[number, bigint | number]>).map(([s, id]) => [Number(s), Number(id)])
  }

  /** The randomness of block n (the block author's VRF, Randomness.ByBlock), or null if block n is not produced yet. */
  async randomness (blockNumber: number): Promise<string | null> {
    const r = await this.api.query.randomness.byBlock(blockNumber) as unknown as { isSome: boolean, unwrap: () => { toHex: () => string } }
    return r.isSome ? r.unwrap().toHex() : null
  }
}
