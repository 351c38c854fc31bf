// Lint and format for the product and its tests (`npm run lint`; `npx eslint --fix .` formats);
// the layer rule (protocols ← actors ← node ← devnet, no cycles) lives in .dependency-cruiser.cjs.
import tseslint from 'typescript-eslint'
import stylistic from '@stylistic/eslint-plugin'

// the house style: 2 spaces, single quotes, no semicolons, a space before a function's parens
const style = stylistic.configs.customize({ indent: 2, quotes: 'single', semi: false, braceStyle: '1tbs', commaDangle: 'never', arrowParens: false })

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'devnet/dashboard/public/**', '.devnet/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      ...style.rules,
      '@stylistic/space-before-function-paren': ['error', 'always'],
      '@stylistic/arrow-parens': ['error', 'as-needed'],
      '@stylistic/quote-props': ['error', 'as-needed'],
      // short guards and table-like code read better on one line
      '@stylistic/max-statements-per-line': 'off',
      '@stylistic/list-style': 'off',
      '@stylistic/operator-linebreak': 'off',
      // long code lines hide what a line does; long strings, comments and URLs stay whole (greppable)
      '@stylistic/max-len': ['error', {
        code: 160, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreComments: true, ignoreRegExpLiterals: true, ignoreUrls: true
      }]
    }
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
      'no-self-compare': 'error',
      // a callback may read a variable before its one assignment (an unsubscribe handle)
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }]
    }
  },
  {
    // tests poke at library internals (xstate snapshots, polkadot codecs) where `any` is the honest type
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  }
)
