import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-artifacts/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // undici's index loads fetch, WebSocket, the caches and the mocks (~8 MB resident the daemon never uses):
    // src takes undici's values from src/lib/http/undici.ts; types from 'undici' are erased and cost nothing.
    files: ['src/**/*.ts'],
    ignores: ['src/lib/http/undici.ts', 'src/lib/http/undici-lib.d.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'undici',
              message:
                'Import Agent, Client, Pool and request from src/lib/http/undici.ts (the index loads fetch etc.).',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', URL: 'readonly' },
    },
  },
);
