// Progress of an apt-get install, read from the status lines apt-get writes
// to the descriptor named by `-o APT::Status-Fd=N`:
//   dlstatus:<item>:<percent>:<text>   while downloading
//   pmstatus:<package>:<percent>:<text> while dpkg unpacks and configures
//   dlerror / pmerror / pmconffile / media-change: problems and questions
// Plain JavaScript with no dependencies: `npm test` runs it (through
// ensure-dataset.mjs) before anything is built. Types: apt-progress.d.mts.
import { spawn } from 'node:child_process'

const KINDS = new Set(['dlstatus', 'pmstatus', 'dlerror', 'pmerror', 'pmconffile', 'media-change'])

/** One status line, or undefined for anything else (a malformed or unknown line is ignored, never fatal). */
export function parseAptStatus (line) {
  const s = String(line).replace(/\r?\n$/, '')
  const a = s.indexOf(':'); const b = s.indexOf(':', a + 1); const c = s.indexOf(':', b + 1)
  if (a < 0 || b < 0) return undefined
  const kind = s.slice(0, a)
  if (!KINDS.has(kind)) return undefined
  const item = s.slice(a + 1, b)
  if (kind === 'dlstatus' || kind === 'pmstatus') {
    if (c < 0) return undefined
    const percent = Number(s.slice(b + 1, c))
    if (s.slice(b + 1, c).trim() === '' || !Number.isFinite(percent) || percent < 0 || percent > 100) return undefined
    return { kind, item, percent, text: s.slice(c + 1) }
  }
  return { kind, item, text: s.slice(b + 1) }
}

/**
 * Turns status lines into one fraction for the whole install: downloading is
 * the first half and dpkg the second when there is something to download,
 * dpkg all of it otherwise. The ETA is the time so far scaled by what is left.
 */
export class InstallProgress {
  constructor (pkg, now = Date.now) {
    this.pkg = pkg
    this.now = now
    this.started = now()
    this.downloads = false
    this.fraction = 0
  }

  /** An event for a parsed status line (undefined for lines that say nothing about progress). */
  update (st) {
    if (st == null) return undefined
    if (st.kind === 'dlerror' || st.kind === 'pmerror') return { package: this.pkg, phase: 'error', text: st.text }
    if (st.kind !== 'dlstatus' && st.kind !== 'pmstatus') return undefined
    if (st.kind === 'dlstatus') this.downloads = true
    const p = st.percent / 100
    const f = st.kind === 'dlstatus' ? p / 2 : this.downloads ? 0.5 + p / 2 : p
    // apt's percentages restart between its stages: the bar never goes back
    this.fraction = Math.max(this.fraction, Math.min(1, f))
    const elapsed = (this.now() - this.started) / 1000
    const etaSec = this.fraction >= 0.02 && this.fraction < 1 ? Math.round(elapsed * (1 - this.fraction) / this.fraction) : undefined
    return { package: this.pkg, phase: st.kind === 'dlstatus' ? 'download' : 'install', percent: Math.round(this.fraction * 1000) / 10, ...(etaSec != null ? { etaSec } : {}), text: st.text }
  }
}

const BAR = 20
/** A terminal line for an event: bar, percent, phase, ETA. */
export function formatTty (ev) {
  const f = Math.min(1, Math.max(0, (ev.percent ?? 0) / 100))
  const full = Math.round(f * BAR)
  const eta = ev.etaSec != null ? ` ETA ${ev.etaSec} s` : ''
  return `${ev.package} ${'█'.repeat(full)}${'░'.repeat(BAR - full)} ${Math.round(f * 100)}% ${ev.phase === 'download' ? 'downloading' : 'installing'}${eta}`
}

/**
 * A reporter for events: a bar redrawn in place on a terminal, one JSON line
 * per event otherwise (CI logs, pipes, the devnet reading us).
 */
export function reporter (stream, tty) {
  let drawn = false
  return ev => {
    if (!tty) { stream.write(JSON.stringify({ event: 'dataset-install', ...ev }) + '\n'); return }
    if (ev.phase === 'download' || ev.phase === 'install') { stream.write(`\r\x1b[K${formatTty(ev)}`); drawn = true; return }
    if (drawn) { stream.write('\n'); drawn = false }
    stream.write(`${ev.text}\n`)
  }
}

/**
 * Runs `apt-get <args>` with its status lines on descriptor 3, calling
 * onStatus for each parsed line. Resolves with the exit code and the last
 * lines apt printed (for the error message).
 */
export function aptGet (args, onStatus, apt = 'apt-get') {
  return new Promise(resolve => {
    let child
    try {
      child = spawn(apt, ['-o', 'APT::Status-Fd=3', ...args], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    } catch (err) { resolve({ code: -1, tail: [err.message] }); return }
    const tail = []
    const keep = d => { for (const l of d.toString().split('\n')) if (l.trim() !== '') { tail.push(l); if (tail.length > 12) tail.shift() } }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let buf = ''
    child.stdio[3].setEncoding('utf8')
    child.stdio[3].on('data', d => {
      buf += d
      let nl
      while ((nl = buf.indexOf('\n')) >= 0) {
        const st = parseAptStatus(buf.slice(0, nl))
        buf = buf.slice(nl + 1)
        if (st != null) onStatus(st)
      }
      if (buf.length > 64 * 1024) buf = '' // not status lines: dropped, never grown without bound
    })
    child.on('error', err => resolve({ code: -1, tail: [err.message] }))
    child.on('close', code => resolve({ code: code ?? -1, tail }))
  })
}

/**
 * Installs a Debian package with progress events: start, download/install
 * (percent, ETA), retry (after refreshing the package lists), done or failed.
 */
export async function installWithProgress (pkg, emit, apt = 'apt-get') {
  emit({ package: pkg, phase: 'start', text: `installing the Debian package ${pkg}…` })
  let p = new InstallProgress(pkg)
  const onStatus = st => { const ev = p.update(st); if (ev != null) emit(ev) }
  let r = await aptGet(['install', '-y', '--no-install-recommends', pkg], onStatus, apt)
  if (r.code !== 0) {
    emit({ package: pkg, phase: 'retry', text: `apt-get install ${pkg} failed (${r.tail.at(-1) ?? `exit ${r.code}`}); refreshing the package lists and trying again…` })
    const u = await aptGet(['update'], () => {}, apt)
    if (u.code === 0) {
      p = new InstallProgress(pkg)
      r = await aptGet(['install', '-y', '--no-install-recommends', pkg], onStatus, apt)
    } else r = u
  }
  emit(r.code === 0
    ? { package: pkg, phase: 'done', percent: 100, text: `${pkg} installed` }
    : { package: pkg, phase: 'failed', text: `apt-get could not install ${pkg}: ${r.tail.slice(-3).join(' / ') || `exit ${r.code}`}` })
  return r.code === 0
}
