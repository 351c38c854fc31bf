import { activeRoleActor } from '../../../actors/index.js'
import { HttpError } from '../../control/server.js'
import type { Handlers } from '../../control/routes.js'
import type { RolesService } from '../service.js'
import type { RolesEndpoints } from './routes.js'

// POST /v1/submit: hands a task program to the submitter actor and answers
// with the task id once the actor has it on chain (or its error).

const SUBMIT_TIMEOUT_MS = 600_000

export function submitHandler (svc: RolesService): Handlers<RolesEndpoints>['submit'] {
  return async ({ program, economics }) => {
    const sub = activeRoleActor(svc.actor.getSnapshot(), 'submitter')
    if (sub == null) throw new HttpError(409, 'this peer does not have the submitter role; add it with "proofswarm roles add submitter"')
    const before = new Set(sub.getSnapshot().context.open)
    const prevError = sub.getSnapshot().context.error
    const result = new Promise<{ taskId: number }>((resolve, reject) => {
      const timer = setTimeout(() => { s.unsubscribe(); reject(new HttpError(504, 'the task was not submitted within 10 minutes; see "proofswarm trace --role submitter"')) }, SUBMIT_TIMEOUT_MS)
      const s = sub.subscribe(st => {
        const added = st.context.open.find(t => !before.has(t))
        if (added != null) { clearTimeout(timer); s.unsubscribe(); resolve({ taskId: added }) } else if (st.context.error != null && st.context.error !== prevError) { clearTimeout(timer); s.unsubscribe(); reject(new HttpError(502, `submission failed: ${st.context.error}`)) }
      })
    })
    svc.send({ type: 'cmd.submit', spec: { program, economics } })
    return await result
  }
}
