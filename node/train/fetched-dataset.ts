import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import type { DatasetRef } from '../../protocols/program/program.js'
import { MAX_IDX_FILE_BYTES } from '../../protocols/verification/fetch-limits.js'
import { DatasetError, IDX_PARTS, datasetHash } from './dataset.js'
import { fetchedDatasetDir } from './store.js'

// A dataset fetched from the swarm is kept under its content hash
// (datasets/<sha256>) for every later job on it: a replay, a dispute's tape
// and segment re-runs, a dataset challenge's serve. A program's dataset hash
// is its submitter's word, so any submitter can name another task's dataset
// hash with a bundle of its own: fetched into that directory, its files
// replaced (or, as `.gz`, shadowed) the honest copy there, and the honest
// task's tapes then failed the content check (the solver lost its dispute, the
// verifier its challenge). So a fetch goes into a directory of its own and is
// moved under the hash only once its content hash is the program's: what is
// there is that dataset, and is never written again.

const gunzipAsync = promisify(gunzip)
/** fetches in progress (or left by a process that died): `.fetch-<pid>-<random>` */
const STAGING = /^\.fetch-(\d+)-[0-9a-f]+$/

/** The content hash of the IDX files in `dir`, as the loader (dataset.ts) reads them: `.gz` first, else raw. */
export async function idxDirHash (dir: string): Promise<string> {
  const parts: Uint8Array[] = []
  for (const base of IDX_PARTS) {
    let part: Uint8Array | undefined
    for (const [name, gz] of [[base + '.gz', true], [base, false]] as const) {
      const f = join(dir, name)
      if (!existsSync(f)) continue
      if ((await stat(f)).size > MAX_IDX_FILE_BYTES) throw new DatasetError(`${f} is over ${MAX_IDX_FILE_BYTES} bytes`)
      const b = await readFile(f)
      // decompressed off the event loop (zlib's thread pool): the peer keeps serving meanwhile
      try { part = gz ? await gunzipAsync(b, { maxOutputLength: MAX_IDX_FILE_BYTES }) : b } catch (e) { throw new DatasetError(`${f}: cannot decompress: ${(e as Error).message}`) }
      break
    }
    if (part === undefined) throw new DatasetError(`dataset file ${base}(.gz) is missing in ${dir}`)
    parts.push(part)
  }
  return datasetHash(parts)
}

/**
 * The directory of `ref`'s dataset under `dataDir`: there already, or filled by `fill` (a fetch) in a
 * directory of its own and moved there once its content hash is `ref.sha256` (else DatasetError, nothing kept).
 */
export async function installFetchedDataset (dataDir: string, ref: Pick<DatasetRef, 'sha256'>, fill: (dir: string) => Promise<unknown>): Promise<string> {
  const final = fetchedDatasetDir(dataDir, ref)
  if (existsSync(final)) return final
  const root = join(dataDir, 'datasets')
  await mkdir(root, { recursive: true })
  await sweepStaging(root)
  const staging = join(root, `.fetch-${process.pid}-${randomBytes(6).toString('hex')}`)
  try {
    await fill(staging)
    const got = await idxDirHash(staging)
    if (got !== ref.sha256) throw new DatasetError(`the fetched dataset's content hash is ${got}, not the program's ${ref.sha256}`)
    try {
      await rename(staging, final)
    } catch (e) {
      // another fetch of the same dataset finished first: its copy is as good
      if (!existsSync(final)) throw e
    }
    return final
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** Removes the staging directories of processes that are gone (a crash mid-fetch). */
async function sweepStaging (root: string): Promise<void> {
  for (const name of await readdir(root)) {
    const m = STAGING.exec(name)
    if (m === null || Number(m[1]) === process.pid || alive(Number(m[1]))) continue
    await rm(join(root, name), { recursive: true, force: true })
  }
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM' }
}
