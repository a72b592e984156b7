// @ts-check
// ESLint for src/, test/, handlers/, bench/, scripts/ and bin/ (`npm run lint`,
// which `npm test` runs first). TypeScript gets typescript-eslint's type-aware
// recommended rules, with type information from tsconfig.json through the
// project service; JavaScript files (no type information) get the same rules
// less the type-aware ones.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', 'test-results/', 'bench/results/', '.switchyard/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
