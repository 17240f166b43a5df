/**
 * Module boundaries, checked in CI (`npm run lint:boundaries`, run by .ci/run):
 * a module is reached from another only through its index.ts, platform code
 * knows no module, production code imports no test code, and nothing imports
 * in a circle. docs/decisions/foundation.md, "Module boundaries".
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: the files depend on each other, so neither can be read or changed alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'module-through-index',
      severity: 'error',
      comment: "Another module is reached through its index.ts, its public surface; its other files are its own business.",
      from: { path: '^src/modules/([^/]+)/', pathNot: '\\.test\\.ts$|/testing\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment: 'src/platform is shared by every module; a module reaches it, never the other way round (modules offer what the platform needs through ServiceModule).',
      from: { path: '^src/platform/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'Production code never imports a test or a test helper.',
      from: { path: '^src/', pathNot: '\\.test\\.ts$|/testing\\.ts$' },
      to: { path: '\\.test\\.ts$|^test/|/testing\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|generated)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
