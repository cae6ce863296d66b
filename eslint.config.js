// @ts-check
import tseslint from 'typescript-eslint';

/** Third-party drivers, each imported in one place only. */
const DRIVERS = [
  { name: 'postgres', message: 'postgres is imported only in src/store/.' },
  { name: 'piscina', message: 'piscina is imported only in src/workers/.' },
  {
    name: 'uWebSockets.js',
    message: 'uWebSockets.js is imported only in src/transports/websocket/.',
  },
];

/** Layer boundaries (docs/architecture.md): which src folders a folder must not import. */
function boundary(files, forbidden, message) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: DRIVERS,
          patterns: [{ group: forbidden.map((folder) => `**/${folder}/**`), message }],
        },
      ],
    },
  };
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      'bench/results/**',
      'scratch/**',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      curly: ['error', 'all'],
      'no-shadow': 'off',
      '@typescript-eslint/no-shadow': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: DRIVERS }],
    },
  },
  boundary(
    ['src/media/**'],
    [
      'config',
      'store',
      'control',
      'pipeline',
      'providers',
      'transports',
      'calls',
      'workers',
      'chat',
      'files',
    ],
    'src/media is pure: it imports only src/core.',
  ),
  boundary(
    ['src/pipeline/**'],
    ['config', 'store', 'control', 'transports', 'calls', 'workers', 'chat', 'files'],
    'src/pipeline builds on src/media and provider interfaces only.',
  ),
  boundary(
    ['src/control/**'],
    ['media', 'pipeline', 'transports', 'workers/call-worker'],
    'src/control talks to the store and the worker host, never to media.',
  ),
  {
    files: ['src/store/**', 'src/workers/**', 'src/transports/websocket/**', 'test/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Tests read JSON response bodies as `any` on purpose: the assertions are the type check.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
