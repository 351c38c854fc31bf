import { canonicalJson } from './canonical-json.js'
import { validateProgram, type TaskProgram } from './program.js'
import { ProgramError, type TopologyInfo } from './topology.js'

// The program as bytes on chain: its canonical JSON (what program_hash is
// the sha256 of). submit_task carries them so the chain can check the program
// is admissible; claims carry them so the chain can read runtime and data order.

export const MAX_PROGRAM_BYTES = 16 * 1024

/** The canonical bytes of a program (derived fields dropped). */
export function programBytes (p: TaskProgram): Uint8Array {
  const { info: _info, ...rest } = p as TaskProgram & { info?: unknown }
  return new TextEncoder().encode(canonicalJson(rest))
}

/** Parses and validates canonical program bytes; throws ProgramError. */
export function parseProgramBytes (bytes: Uint8Array): TaskProgram & { info: TopologyInfo } {
  if (bytes.length > MAX_PROGRAM_BYTES) throw new ProgramError(`the program is ${bytes.length} bytes, more than ${MAX_PROGRAM_BYTES}`)
  let text: string
  let value: unknown
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    value = JSON.parse(text)
  } catch { throw new ProgramError('the program bytes are not UTF-8 JSON') }
  const p = validateProgram(value)
  if (canonicalJson(value) !== text) throw new ProgramError('the program bytes are not canonical JSON (sorted keys, no whitespace): send programBytes(program)')
  return p
}
