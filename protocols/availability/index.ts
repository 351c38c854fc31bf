export * from './response.js'
export * from './checkpoint-check.js'
export * from './serve.js'
