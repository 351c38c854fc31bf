/** An error meant for the user: printed without a stack trace. */
export class CliError extends Error {
  constructor (message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'CliError'
  }
}
