import type { ComponentLogger, Logger } from '@libp2p/interface'

// libp2p makes a logger for every connection, stream and protocol exchange
// (newScope), and each is three `debug` instances, each asking whether stderr
// is a TTY (an fstat and an ioctl): at 20 peers a process, ~90 such syscall
// pairs a second while idle. Unless DEBUG names something to log (then
// libp2p's own loggers, as before), they all share one logger that does
// nothing. The node's own log (pino) is not affected.

const noop = (): void => {}
const quiet: Logger = Object.assign(noop.bind(undefined), {
  error: noop,
  trace: noop,
  enabled: false,
  newScope: (): Logger => quiet
})

/** undefined (libp2p's default loggers) when DEBUG is set, otherwise one silent logger for every component */
export function libp2pLogger (env: NodeJS.ProcessEnv = process.env): ComponentLogger | undefined {
  if ((env.DEBUG ?? '').trim() !== '') return undefined
  return { forComponent: () => quiet }
}
