// Type-aware lint of the TypeScript sources and tests (typescript-eslint), run by `npm run lint`
// with zero warnings allowed. Formatting is Prettier's (`npm run format:check`), not ESLint's.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'src/client/',
      'src/http/generated/',
      'bench/results/',
      'sdk/*/dist/',
      'test-artifacts/',
      '**/*.mjs',
      '**/*.cjs',
      '**/*.js',
      'deploy/*.d.cts',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Fire-and-forget must be explicit (`void`), so a forgotten await is visible.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
      // Memory implementations of the store interfaces are async without awaiting anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The widget's sources are ES modules (import.meta): checked with their own compiler options.
    files: ['sdk/widget/src/**/*.ts'],
    languageOptions: { parserOptions: { project: ['./tsconfig.widget.json'], tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['test/**/*.ts', 'sdk/*/test/**/*.ts'],
    rules: {
      // Tests reach into payloads and library internals on purpose.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // The bundle test runs the script-tag build the way a page would.
      '@typescript-eslint/no-implied-eval': 'off',
    },
  },
);
