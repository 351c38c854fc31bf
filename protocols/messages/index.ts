export * from './codec.js'
export * from './schemas.js'
