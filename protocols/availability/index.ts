export * from './headers.js'
export * from './checkpoint-check.js'
export * from './serve.js'
