import type { Command } from 'commander'

// One module per command; each registers itself on the root program.
export type Register = (program: Command) => void

export const commands: Register[] = [
]
