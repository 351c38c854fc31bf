import type { Command } from 'commander'
import { ControlClient } from '../../control/client.js'
import { parseRoles } from '../../config.js'
import { CliError } from '../errors.js'
import { addDataDir, addJson, dataDirOf, printJson } from '../options.js'

interface RolesReply { roles: string[], active: Record<string, string>, retiring: string[] }

function show (r: RolesReply, json: boolean | undefined): void {
  if (json === true) { printJson(r); return }
  process.stdout.write(`roles: ${r.roles.length > 0 ? r.roles.join(', ') : '(none)'}\n`)
  for (const [role, id] of Object.entries(r.active)) process.stdout.write(`  ${role}: actor ${id}\n`)
  if (r.retiring.length > 0) process.stdout.write(`finishing in-flight work before stopping: ${r.retiring.join(', ')}\n`)
}

// Switch a running peer's roles without restarting it.
export function register (program: Command): void {
  const cmd = program.command('roles [op] [roles]')
    .description('show or change a running peer\'s roles: roles [show] | roles set|add|remove <r1,r2>. Removed roles finish in-flight work first.')
  addDataDir(cmd, 'peer'); addJson(cmd)
  cmd.action(async (op: string | undefined, roles: string | undefined, o: { dataDir?: string, json?: boolean }) => {
    const verb = op ?? 'show'
    if (!['show', 'set', 'add', 'remove'].includes(verb)) throw new CliError(`unknown roles operation "${verb}": use show, set, add or remove`, 2)
    let list: string[] = []
    if (verb !== 'show') {
      if (roles == null && verb !== 'set') throw new CliError(`roles ${verb} needs a comma-separated list of roles`, 2)
      try { list = parseRoles(roles ?? '') } catch (err) { throw new CliError((err as Error).message, 2) }
      // an empty set would silently stop every role of a running peer
      if (verb === 'set' && list.length === 0) throw new CliError('roles set needs at least one role (to stop every role, stop the peer: roles remove <all of them> is explicit)', 2)
    }
    try {
      const c = await ControlClient.fromDataDir(dataDirOf(o, 'peer'))
      const r = verb === 'show' ? await c.get<RolesReply>('/v1/roles') : await c.post<RolesReply>('/v1/roles', { op: verb, roles: list })
      show(r, o.json)
    } catch (err) { throw new CliError((err as Error).message) }
  })
}
