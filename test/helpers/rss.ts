import { readFile } from 'node:fs/promises'

// Resident set size of a process, read from /proc (Linux), in MiB: the
// total, and its anonymous part (heap, buffers: what the process itself
// holds) apart from file-backed pages (code, and LevelDB's mmapped tables,
// which are page cache mapped while a read or a compaction touches them).

export interface Rss { total: number, anon: number, file: number }

export async function rss (pid: number): Promise<Rss> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    if (m == null) throw new Error(`no ${name} for pid ${pid}`)
    return Number(m[1]) / 1024
  }
  return { total: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') }
}

export async function rssMiB (pid: number): Promise<number> {
  return (await rss(pid)).total
}

const max = (a: Rss, b: Rss): Rss => ({ total: Math.max(a.total, b.total), anon: Math.max(a.anon, b.anon), file: Math.max(a.file, b.file) })

/** The highest RSS figures of `pid` seen (every `everyMs`) until `work` settles, and `work`'s result. */
export async function peakRssDuring<T> (pid: number, work: Promise<T>, everyMs = 20): Promise<{ peak: Rss, result: T }> {
  let peak = await rss(pid)
  let done = false
  const sampler = (async () => {
    while (!done) {
      peak = max(peak, await rss(pid).catch(() => peak))
      await new Promise(resolve => setTimeout(resolve, everyMs))
    }
  })()
  try {
    const result = await work
    return { peak, result }
  } finally {
    done = true
    await sampler
  }
}

/** The highest RSS figures of `pid` over `ms`, sampled every `everyMs`. */
export async function peakRssFor (pid: number, ms: number, everyMs = 50): Promise<Rss> {
  return (await peakRssDuring(pid, new Promise(resolve => setTimeout(resolve, ms)), everyMs)).peak
}

/** Waits (bounded) until the RSS of `pid` moved less than `tolMiB` over `windowMs`: background work (compactions, GC) has settled. */
export async function settledRss (pid: number, windowMs = 2000, tolMiB = 4, maxMs = 30_000): Promise<Rss> {
  const deadline = Date.now() + maxMs
  let prev = await rss(pid)
  while (Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, windowMs))
    const cur = await rss(pid)
    if (Math.abs(cur.total - prev.total) < tolMiB) return cur
    prev = cur
  }
  return prev
}

export function round (r: Rss): Rss {
  return { total: Math.round(r.total), anon: Math.round(r.anon), file: Math.round(r.file) }
}
