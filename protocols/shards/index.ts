export * from './cid.js'
export * from './manifest.js'
export * from './messages.js'
export * from './chunker.js'
