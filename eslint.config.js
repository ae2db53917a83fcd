// @ts-check
import tseslint from 'typescript-eslint';

/**
 * One config block per folder rule: a relative import whose path matches one of `forbid` (regular
 * expressions over the import string; `(^|/)` there means "at a path segment of a relative import")
 * is an error. Package imports are never matched: `semver/functions/…` is not the functions/ folder.
 * `rule` is the ESLint rule that carries them: a later block replaces an earlier one's settings of
 * the same rule, so rules that nest inside another's files use a rule of their own.
 * @param {{ files: string[], ignores?: string[], forbid: string[], why: string }[]} rules
 * @param {string} [rule]
 */
function boundaries(rules, rule = 'no-restricted-imports') {
  return rules.map(({ files, ignores, forbid, why }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      [rule]: [
        'error',
        {
          patterns: forbid.map((folder) => ({
            regex: folder.replace(/^\(\^\|\/\)/, '^\\.{1,2}/(?:.*/)?'),
            message: `${why} (../shared/ARCHITECTURE.md, Folders).`,
          })),
        },
      ],
    },
  }));
}

export default tseslint.config(
  {
    ignores: ['dist/**', 'cdk.out/**', 'node_modules/**', '**/node_modules/**', 'coverage/**', 'data/**', 'release/**'],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['*.js', 'edge-agent/bin/*.js', 'bench/*.mjs', 'scripts/*.mjs', 'scripts/release/*.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
    },
  },
  // The folder table of ../shared/ARCHITECTURE.md ("Folders": who may import whom), held by the linter.
  ...boundaries([
    {
      files: ['shared/**/*.ts'],
      forbid: ['(^|/)(functions|edge-agent|infra)/'],
      why: 'shared/ is the domain: it imports npm libraries and shared/ only',
    },
    { files: ['functions/**/*.ts'], forbid: ['(^|/)(edge-agent|infra)/'], why: 'functions/ imports shared/ only' },
    {
      files: ['edge-agent/**/*.ts'],
      ignores: ['edge-agent/runtime/boot.ts'],
      forbid: ['(^|/)(functions|infra)/'],
      why: 'edge-agent/ imports shared/ only; the composition root (edge-agent/runtime/boot.ts) is the one exception',
    },
    // The one exception: `svc local` composes local mode's runners (functions/local/) into the edge agent's process.
    {
      files: ['edge-agent/runtime/boot.ts'],
      forbid: ['(^|/)infra/', '(^|/)functions/(?!local/)'],
      why: 'the composition root may import functions/local/ and nothing else of functions/',
    },
    {
      files: ['infra/**/*.ts'],
      forbid: ['(^|/)functions/(?!contract\\.js$)', '(^|/)shared/(?!config/)', '(^|/)edge-agent/'],
      why: 'infra/ imports functions/contract.ts (names, routes, entry files) and the config loader only, so cdk synth loads none of the runtime libraries',
    },
  ]),
  // The edge sources share parts only through sources/common/, never from each other.
  ...boundaries(
    [
      {
        files: ['edge-agent/sources/platform/**/*.ts'],
        forbid: ['(^|/)udp/'],
        why: 'the pollers take what they share with the UDP source from sources/common/',
      },
      {
        files: ['edge-agent/sources/udp/**/*.ts'],
        forbid: ['^\\.\\./(\\.\\./)?platform/'],
        why: 'the UDP source takes what it shares with the pollers from sources/common/',
      },
      {
        files: ['edge-agent/sources/common/**/*.ts'],
        forbid: ['^\\.\\./(udp|platform)/'],
        why: 'sources/common/ serves both sources and depends on neither',
      },
    ],
    '@typescript-eslint/no-restricted-imports',
  ),
  {
    // The web view's browser scripts (plain JS served as they are, not part of any tsconfig).
    files: ['edge-agent/endpoints/web/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Benchmarks and build scripts are plain ESM scripts run against the built dist/: no type information to check.
    files: ['bench/**/*.mjs', 'scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);
