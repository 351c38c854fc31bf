export * from './params.js'
export * from './commitment.js'
export * from './response.js'
// coder.ts (the Reed–Solomon library) is imported directly by those that code or decode,
// so the chain runtime, which only checks Merkle paths, never loads it
