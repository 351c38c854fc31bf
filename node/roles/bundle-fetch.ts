import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_BUNDLE_BYTES, MAX_BUNDLE_FILES } from '../../protocols/verification/fetch-limits.js'
import type { ShardService } from '../shards/index.js'

// A bundle is a JSON list of a directory's files, a name and a shard CID each,
// published by whoever made the directory: a submitter its dataset, a solver
// its trained model. Each file is fetched within the most it can honestly be
// (protocols/verification/fetch-limits.ts), or not at all when it is no file
// the reader reads: a bundle naming one block 20,000 times as a file, or
// listing thousands of files, filled the fetcher's disk before any content
// check (a dataset's hash is checked once it is whole), and its fetches had no
// end in time but their caller's.

export class BundleError extends Error {
  constructor (message: string) { super(message); this.name = 'BundleError' }
}

/**
 * Fetches the files of bundle `cid` that `maxBytes` names a bound for into
 * `dir` (others are skipped: nothing reads them), each refused unfetched when
 * its manifest declares more; everything ends with `signal`, and is asked of the `preferred`
 * peers first (who published it). Returns the names written.
 */
export async function fetchBundle (
  shards: ShardService, cid: string, dir: string, maxBytes: (name: string) => number | undefined,
  o: { signal?: AbortSignal, preferred?: string[] } = {}
): Promise<string[]> {
  const { signal, preferred } = o
  const bundle = JSON.parse(new TextDecoder().decode(await shards.fetchBytes(cid, { maxBytes: MAX_BUNDLE_BYTES, signal, preferred }))) as { files?: unknown }
  const files = bundle.files
  if (!Array.isArray(files) || files.length > MAX_BUNDLE_FILES) throw new BundleError(`bundle ${cid} does not list at most ${MAX_BUNDLE_FILES} files`)
  const wanted: Array<{ name: string, cid: string, max: number }> = []
  for (const f of files as Array<{ name?: unknown, cid?: unknown }>) {
    // a plain name: no directory, no leading dot (".." would be the parent)
    if (typeof f?.name !== 'string' || !/^[\w-][\w.-]*$/.test(f.name)) throw new BundleError(`bad file name in bundle ${cid}: ${String(f?.name)}`)
    if (typeof f.cid !== 'string') throw new BundleError(`bundle ${cid} names no CID for ${f.name}`)
    if (wanted.some(w => w.name === f.name)) throw new BundleError(`bundle ${cid} lists ${f.name} twice`)
    const max = maxBytes(f.name)
    if (max !== undefined) wanted.push({ name: f.name, cid: f.cid, max })
  }
  mkdirSync(dir, { recursive: true })
  for (const f of wanted) await shards.fetchToFile(f.cid, join(dir, f.name), { maxBytes: f.max, signal, preferred })
  return wanted.map(f => f.name)
}
