export * from './response.js'
