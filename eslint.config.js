// ESLint with typescript-eslint's type-aware rules on the service, the projections, the console and the hosted page;
// `npm test` runs it (scripts/test.mjs, through `npm run lint`).
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'clients/typescript/dist/**', 'console/dist/**'] },
  {
    files: ['src/**/*.ts', 'projections/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['console/src/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
    languageOptions: { parserOptions: { project: './console/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    // Pages only call their feature's hooks: each query, key and mutation is written once, in
    // console/src/features/<feature>/api.ts (types from the library stay allowed).
    files: ['console/src/pages/**/*.tsx', 'console/src/components/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: '@tanstack/react-query', message: 'Call a hook of console/src/features/<feature>/api.ts instead.', allowTypeImports: true }] },
      ],
    },
  },
  {
    files: ['widget/src/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { project: './widget/tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    rules: {
      // A leading underscore names what is left unused on purpose (a parameter a port's signature
      // has, a field taken out of an object by destructuring).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Ports and Nest hooks are declared as returning promises; an implementation with nothing to
      // wait for stays `async` so that whatever it throws reaches the caller as a rejection.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read HTTP answers, CLI output and rows as JSON (`any`) and assert on their shape: the
    // unsafe-any family would only make them cast every body before each expectation.
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
);
