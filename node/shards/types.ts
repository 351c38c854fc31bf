import type { Logger } from 'pino'
import type { Host } from '../p2p/host.js'
import type { ProviderStat } from './provider-source.js'
import type { BlockStore } from './store.js'
import type { RetentionHold } from './root-records.js'

// The shard service's options and results, and what its parts share.

/** What every part of a peer's shard service works on. */
export interface ShardContext {
  host: Host
  store: BlockStore
  log: Logger
  /** aborted when the service stops */
  stopped: AbortSignal
}

export interface AddOptions {
  pin?: boolean
  /** retention hold (e.g. until the task's challenge window closes); default: now + defaultRetentionMs */
  retain?: RetentionHold
  /** who holds the retention (task id...); default "default" */
  reason?: string
  /** announce in the DHT (default true; the announcement runs in the background) */
  provide?: boolean
}

export interface AddFileOptions extends AddOptions {
  /**
   * Store a reference (path, offset, size per block) instead of a copy of the
   * bytes: for files that stay where they are while the shard is served (a
   * solver's checkpoints in its run directory). Blocks are read from the file
   * and checked against their CID whenever they are read; if the file changes
   * or vanishes they count as missing. Default false (copy).
   */
  byReference?: boolean
  /** by reference only: blocks of this size (an erasure-coded checkpoint's chunks.bin: one chunk per block); default 1 MiB */
  blockSize?: number
}

export interface AddResult { cid: string, name: string, kind: string, size: number, blocks: number, byReference?: boolean }

export interface FetchProgress {
  root: string
  totalBlocks: number
  haveBlocks: number
  totalBytes: number
  haveBytes: number
  fetchedBytes: number
  providers: number
}

export interface FetchOptions extends AddOptions {
  signal?: AbortSignal
  onProgress?: (p: FetchProgress) => void
  /** fetch only from these peer ids (no DHT lookup) */
  providers?: string[]
  /**
   * Ask these peer ids first, then those the DHT names (the party that must serve the shard:
   * a provider record anyone may add cannot put it behind providers that stall)
   */
  preferred?: string[]
  maxProviders?: number
  pipeline?: number
  findTimeoutMs?: number
  requestTimeoutMs?: number
  /**
   * Refuse a shard whose manifest declares more content than this, before any
   * of its blocks is fetched. A manifest may list one block many times (zero
   * pages do), so a 1 MiB block named 25,000 times reads as 25 GiB: callers
   * bound what a document or a checkpoint of theirs can be. fetchBytes (which
   * holds the content in memory) defaults to MAX_FETCH_BYTES.
   */
  maxBytes?: number
}

export interface FetchToFileOptions extends FetchOptions {
  /**
   * Copy the blocks into the store, then write the file from them (the
   * shard then does not depend on the file). Default false: blocks go
   * straight into the file and the shard is held by reference to it.
   */
  copy?: boolean
  /**
   * Compute the content's sha256 while writing (the result's `sha256`).
   * Default true. False saves ~0.9 ms of CPU per MB for callers that check
   * the content themselves — every block is still checked against its CID.
   */
  contentHash?: boolean
}

export interface FetchResult {
  cid: string
  name: string
  kind: string
  size: number
  blocks: number
  /** blocks already stored before this fetch (resume) */
  alreadyHad: number
  fetchedBlocks: number
  fetchedBytes: number
  durationMs: number
  /** fetched bytes / duration, MiB/s */
  mibPerSecond: number
  /** time until the first provider was known (DHT lookup), ms */
  firstProviderMs?: number
  /** time spent moving data blocks (after the manifest), ms */
  transferMs: number
  /** CPU time of this process (all threads) during the fetch, ms; other work of the peer included */
  cpuMs: number
  providers: ProviderStat[]
}

export type FileFetchResult = FetchResult & { out: string, sha256?: string }

export interface GcOptions { currentBlock?: number, now?: number }
