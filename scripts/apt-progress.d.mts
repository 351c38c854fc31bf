// Types of scripts/apt-progress.mjs (plain JavaScript: it runs before the build).
export interface AptStatus { kind: 'dlstatus' | 'pmstatus' | 'dlerror' | 'pmerror' | 'pmconffile' | 'media-change', item: string, percent?: number, text: string }
export interface InstallEvent { package: string, phase: 'start' | 'download' | 'install' | 'retry' | 'done' | 'failed' | 'error' | 'missing', percent?: number, etaSec?: number, text: string }
export function parseAptStatus (line: string): AptStatus | undefined
export class InstallProgress {
  constructor (pkg: string, now?: () => number)
  fraction: number
  update (st: AptStatus | undefined): InstallEvent | undefined
}
export function formatTty (ev: InstallEvent): string
export function reporter (stream: { write: (s: string) => unknown }, tty: boolean): (ev: InstallEvent) => void
export function aptGet (args: string[], onStatus: (st: AptStatus) => void, apt?: string): Promise<{ code: number, tail: string[] }>
export function installWithProgress (pkg: string, emit: (ev: InstallEvent) => void, apt?: string): Promise<boolean>
