// The layer rule of docs/architecture.md, checked by `npm run lint`:
// protocols/ ← actors/ ← node/ ← devnet/, and no cycles anywhere.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import cycles hide which module owns what.', from: {}, to: { circular: true } },
    { name: 'protocols-are-pure', severity: 'error', comment: 'protocols/ is pure logic: it imports nothing else of the project.', from: { path: '^protocols/' }, to: { path: '^(actors|node|devnet)/' } },
    { name: 'actors-over-protocols', severity: 'error', comment: 'actors/ builds only on protocols/.', from: { path: '^actors/' }, to: { path: '^(node|devnet)/' } },
    { name: 'node-not-devnet', severity: 'error', comment: 'node/ never imports devnet/; only the CLI entry composes devnet commands.', from: { path: '^node/', pathNot: '^node/cli/main\\.ts$' }, to: { path: '^devnet/' } },
    { name: 'chain-runtime-is-pure', severity: 'error', comment: 'The chain runtime is pure state-transition logic: no I/O layers.', from: { path: '^devnet/chain/runtime/' }, to: { path: '^(node|actors)/|^devnet/(?!chain/runtime/)' } },
    { name: 'no-test-imports', severity: 'error', comment: 'Product code never imports tests.', from: { path: '^(protocols|actors|node|devnet)/' }, to: { path: '^test/' } }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' }
  }
}
