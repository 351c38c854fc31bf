// What a submitter offers for a task unless it says otherwise (docs/economics.md):
// rewards, how many verifiers, and the windows the chain enforces.

export interface EconomicsConfig {
  solverReward: bigint
  verifierReward: bigint
  verifierCount: number
  /** blocks after the proof commitment for verdicts and disputes */
  challengeWindow: number
  /** blocks the selected solver has to commit */
  solveTimeout: number
  /** steps each verifier samples; absent: its share of what catches ≥ 10% faked steps with 99% probability (protocols/verification/sample.ts) */
  stepsPerVerifier?: number
}

export const DEFAULT_ECONOMICS: EconomicsConfig = {
  solverReward: 100n * 10n ** 12n,
  verifierReward: 10n * 10n ** 12n,
  verifierCount: 2,
  challengeWindow: 90,
  solveTimeout: 900
}
