// The verifier's checkpoint downloads: every checkpoint its sample needs,
// `width` at a time (each fetch waits on provider lookups more than on bytes),
// and past a problem: each one it cannot use is challenged at once
// (docs/economics.md "Selective serving"; one challenged at a time, the next
// would be met after the serve, past the window, with no challenge left).

export interface FetchProblem { step: number, reason: string }

/** Fetches every item (`fetch` returns a problem or undefined); returns the problems, by step. */
export async function fetchEvery<T extends { step: number }> (
  items: readonly T[], width: number, fetch: (item: T) => Promise<string | undefined>, fetched?: (item: T) => void
): Promise<FetchProblem[]> {
  const problems: FetchProblem[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]
      const problem = await fetch(item)
      if (problem != null) problems.push({ step: item.step, reason: problem })
      else fetched?.(item)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker))
  return problems.sort((a, b) => a.step - b.step)
}
