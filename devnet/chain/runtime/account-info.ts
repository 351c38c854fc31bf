// System.Account's value, apart from balances.ts so that the storage layer
// and its codec can name it without importing the balance logic.

export interface AccountData { free: bigint, reserved: bigint, frozen: bigint, flags: bigint }
export interface AccountInfo { nonce: number, consumers: number, providers: number, sufficients: number, data: AccountData }
