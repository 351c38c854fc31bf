// Progress of the devnet's long waits (training, erasure coding and
// publishing, replays, the challenge window). On a terminal: one line of bars
// with ETAs, redrawn in place under the log. Otherwise: a plain line when an
// item's text changes, at most every `everyMs` per item (CI logs, pipes).
// With --json the caller sends JSON events instead (devnet/cli.ts).

export interface ProgressItem {
  /** short name: "peer2-solver training", "challenge window" */
  label: string
  /** 0..1 when known */
  fraction?: number
  etaSec?: number
  /** what a plain line says */
  text: string
}

const BAR = 16

export function bar (fraction: number, width = BAR): string {
  const f = Math.min(1, Math.max(0, fraction))
  const full = Math.floor(f * width)
  const part = f * width - full >= 0.5 && full < width ? '▌' : ''
  return '█'.repeat(full) + part + '░'.repeat(width - full - part.length)
}

/** One item as it appears on the terminal's progress line. */
export function ttyItem (i: ProgressItem): string {
  if (i.fraction == null) return `${i.label}: ${i.text}`
  const eta = i.etaSec != null && Number.isFinite(i.etaSec) ? ` ETA ${Math.max(0, Math.round(i.etaSec))} s` : ''
  return `${i.label} ${bar(i.fraction)} ${Math.round(100 * Math.min(1, Math.max(0, i.fraction)))}%${eta}`
}

export class ProgressLine {
  private readonly items = new Map<string, ProgressItem>()
  private readonly printed = new Map<string, { text: string, at: number }>()
  private drawn = false

  constructor (
    private readonly out: { write: (s: string) => unknown, isTTY?: boolean, columns?: number },
    private readonly everyMs = 3000, private readonly now = () => Date.now()
  ) {}

  get tty (): boolean { return this.out.isTTY === true }

  /** A log line: printed above the progress line. */
  log (line: string): void {
    this.erase()
    this.out.write(line.endsWith('\n') ? line : line + '\n')
    this.draw()
  }

  set (key: string, item: ProgressItem): void {
    this.items.set(key, item)
    if (this.tty) { this.erase(); this.draw(); return }
    const last = this.printed.get(key)
    const t = this.now()
    if (last != null && (last.text === item.text || t - last.at < this.everyMs)) return
    this.printed.set(key, { text: item.text, at: t })
    this.out.write(`${item.label}: ${item.text}\n`)
  }

  delete (key: string): void {
    if (!this.items.delete(key)) return
    if (this.tty) { this.erase(); this.draw() }
  }

  /** Removes the progress line (before a summary or on exit). */
  clear (): void {
    this.items.clear()
    this.erase()
  }

  private erase (): void {
    if (this.drawn) this.out.write('\r\x1b[K')
    this.drawn = false
  }

  private draw (): void {
    if (!this.tty || this.items.size === 0) return
    // a terminal that reports no size (a pty without a window) says 0 columns
    const cols = this.out.columns
    const width = Math.max(20, (cols != null && cols > 0 ? cols : 100) - 1)
    let s = [...this.items.values()].map(ttyItem).join(' │ ')
    if (s.length > width) s = s.slice(0, width - 1) + '…'
    this.out.write(s)
    this.drawn = true
  }
}
