import { activeRoleActor } from '../../../actors/index.js'
import { HttpError } from '../../control/server.js'
import type { Handlers } from '../../control/routes.js'
import type { RolesService } from '../service.js'
import type { RolesEndpoints, SubmitArgs } from './routes.js'

// POST /v1/submit: hands a task program to the submitter actor and answers
// with the task id once the actor has it on chain (or its error).

const SUBMIT_TIMEOUT_MS = 600_000

/**
 * The id is the one that appears in the actor's open list after this spec is
 * sent. With two submissions in flight both would see the first new id (and
 * the first error): so they go one at a time, each after the previous one's
 * answer.
 */
export function submitHandler (svc: Pick<RolesService, 'actor' | 'send'>): Handlers<RolesEndpoints>['submit'] {
  let previous: Promise<unknown> = Promise.resolve()
  return async args => {
    const mine = previous.then(async () => await submitOne(svc, args))
    previous = mine.catch(() => undefined)
    return await mine
  }
}

async function submitOne (svc: Pick<RolesService, 'actor' | 'send'>, { program, economics }: SubmitArgs): Promise<{ taskId: number }> {
  const sub = activeRoleActor(svc.actor.getSnapshot(), 'submitter')
  if (sub == null) throw new HttpError(409, 'this peer does not have the submitter role; add it with "proofswarm roles add submitter"')
  const before = new Set(sub.getSnapshot().context.open)
  const result = new Promise<{ taskId: number }>((resolve, reject) => {
    const timer = setTimeout(() => { s.unsubscribe(); reject(new HttpError(504, 'the task was not submitted within 10 minutes; see "proofswarm trace --role submitter"')) }, SUBMIT_TIMEOUT_MS)
    // the spec was taken up once the actor is submitting; back out of that with no new id, it failed
    // (its error text may equal the previous one's, so a change of text is not the signal)
    let taken = false
    const s = sub.subscribe(st => {
      const added = st.context.open.find(t => !before.has(t))
      if (st.value === 'submitting') taken = true
      if (added != null) { clearTimeout(timer); s.unsubscribe(); resolve({ taskId: added }) } else if (taken && st.value !== 'submitting') { clearTimeout(timer); s.unsubscribe(); reject(new HttpError(502, `submission failed: ${st.context.error ?? 'unknown error'}`)) }
    })
  })
  svc.send({ type: 'cmd.submit', spec: { program, economics } })
  return await result
}
