import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../log.js'

// Runs the training engine in child processes: training, replay and
// evaluation use the `proofswarm` CLI itself, so a peer runs exactly what an
// operator runs by hand, and the peer process stays small and responsive.

const here = dirname(fileURLToPath(import.meta.url))
const CLI = join(here, '..', 'cli', 'main.js')
const WORKER = join(here, 'engine-worker.js')

export interface EngineRun<T> { result: Promise<T>, kill: () => void }

export function runJson<T> (script: string, args: string[], log: Logger, what: string, opts: { onStderrLine?: (l: string) => void, timeoutMs?: number, okCodes?: number[] } = {}): EngineRun<T> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let errTail = ''
  let partial = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => {
    const s = partial + d.toString()
    const lines = s.split(/[\r\n]/)
    partial = lines.pop() ?? ''
    for (const l of lines) if (l.trim() !== '') { opts.onStderrLine?.(l); errTail = (errTail + '\n' + l).slice(-2000) }
  })
  const timer = opts.timeoutMs != null ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined
  const result = new Promise<T>((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (timer != null) clearTimeout(timer)
      if (!(opts.okCodes ?? [0]).includes(code ?? -1)) {
        reject(new Error(`${what} failed (${signal ?? `exit ${code}`}): ${errTail.trim().split('\n').slice(-3).join(' | ')}`))
        return
      }
      try {
        const start = out.indexOf('{')
        resolve(JSON.parse(out.slice(start)) as T)
      } catch {
        reject(new Error(`${what} printed no JSON result`))
      }
    })
  })
  log.debug({ args }, `${what} started (pid ${child.pid})`)
  return { result, kill: () => child.kill('SIGTERM') }
}

export interface TrainSummary {
  proofRoot: string
  finalStateRoot: string
  steps: number
  completed: boolean
  accuracy?: number
  samplesPerSec: number
  seconds: number
  /** the run ended at its first NaN: 0-based step, entry and element of its op trace (a diverged proof of `steps` steps) */
  divergence?: { step: number, entry: number, flat: number }
}

export function trainInChild (taskFile: string, outDir: string, o: { resume: boolean, datasetDir?: string, extra?: string[] }, log: Logger, onProgress?: (line: string) => void): EngineRun<TrainSummary> {
  const args = ['train', '--task', taskFile, '--out', outDir, '--json', '--log-level', 'warn']
  if (o.resume) args.push('--resume')
  if (o.datasetDir != null) args.push('--dataset-dir', o.datasetDir)
  args.push(...(o.extra ?? []))
  return runJson<TrainSummary>(CLI, args, log, 'training', { onStderrLine: onProgress })
}

export interface ReplaySummary { step: number, fromCheckpoint: number, match: boolean, expected: string, actual: string, firstMismatch?: number, nanStep?: number }

export function evaluateInChild (modelDir: string, datasetDir: string | undefined, log: Logger): EngineRun<{ accuracy: number, testSize: number }> {
  const args = ['evaluate', '--model', modelDir, '--json', '--log-level', 'warn']
  if (datasetDir != null) args.push('--dataset-dir', datasetDir)
  return runJson(CLI, args, log, 'evaluation')
}

export function commitmentsInChild (taskFile: string, datasetDir: string | undefined, log: Logger): EngineRun<{ skeletonRoot: string, datasetRoot: string }> {
  return runJson(WORKER, ['commitments', taskFile, ...(datasetDir != null ? [datasetDir] : [])], log, 'task commitments')
}
