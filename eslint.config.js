import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dashboard/dist/', 'dashboard/src/api-types.ts', 'sdk/dist/', 'node_modules/', 'data/', 'coverage/', 'test-artifacts/', 'reports/', '.stryker-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['bin/**/*.js', 'dashboard/build.js'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
  },
  {
    files: ['docs/examples/**/*.mjs'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', fetch: 'readonly', setTimeout: 'readonly', URLSearchParams: 'readonly', AbortSignal: 'readonly' } },
  },
  {
    // Only the EventStoreDB adapter (and the test double, with the specs of the double itself) use
    // the client library, so that moving to another client (@kurrent/kurrentdb-client) stays there.
    files: ['**/*.ts'],
    ignores: ['src/eventstore/esdb*.ts', 'testing/**', 'test/esdb-test-server*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@eventstore/db-client', '@eventstore/db-client/*'], message: 'only src/eventstore/esdb*.ts use the EventStoreDB client' }] },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
);
