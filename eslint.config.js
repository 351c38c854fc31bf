// Lint for the product and its tests; the layer rule (protocols ← actors ←
// node ← devnet, no cycles) lives in .dependency-cruiser.cjs.
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'devnet/dashboard/public/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
      'no-self-compare': 'error',
      // a callback may read a variable before its one assignment (an unsubscribe handle)
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    }
  },
  {
    // tests poke at library internals (xstate snapshots, polkadot codecs) where `any` is the honest type
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  }
)
