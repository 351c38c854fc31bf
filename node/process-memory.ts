import { getHeapStatistics } from 'node:v8'

/**
 * Where this process's memory is, in bytes: what `process.memoryUsage()` and
 * V8 report. Shared by every peer of a process (a bench may run several).
 * rss less the V8 heap's resident pages, external memory and malloc'd memory
 * is mostly the node binary's pages and native allocations (libuv, OpenSSL,
 * LevelDB).
 */
export interface ProcessMemory {
  rss: number
  /** V8 heap: committed, resident (physical), used */
  heapTotal: number
  heapPhysical: number
  heapUsed: number
  /** memory held by V8 outside its heap (malloc'd by V8 itself) */
  v8Malloced: number
  /** memory of JS objects bound to C++ (Buffers, wasm memories, ...), of which ArrayBuffers */
  external: number
  arrayBuffers: number
}

export function processMemory (): ProcessMemory {
  const m = process.memoryUsage()
  const h = getHeapStatistics()
  return {
    rss: m.rss,
    heapTotal: m.heapTotal,
    heapPhysical: h.total_physical_size,
    heapUsed: m.heapUsed,
    v8Malloced: h.malloced_memory,
    external: m.external,
    arrayBuffers: m.arrayBuffers
  }
}
