// A small rule set that catches real bugs, with type information:
// - a promise nobody awaits or handles (a failure that vanishes, an abort that never lands);
// - unused variables and imports (dead code, or a value computed and then forgotten);
// - `any` crossing a module boundary (an exported function that returns or takes `any` turns off
//   type checking for every caller).
// Style is not linted here: Prettier formats the code, and `npm run lint` checks it first.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "**/node_modules/**",
      "examples/**/node_modules/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
    ],
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            {
              from: "package",
              package: "node:test",
              name: ["test", "describe", "it", "suite", "before", "after", "beforeEach", "afterEach"],
            },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
    },
  },
  {
    // tsc turns `import * as fs from "node:fs"` into a copy of every export, made again in each module
    // that says it: a `khook validate` start paid 1-2 ms for them (DEVELOPERS.md, start-up).
    files: ["**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportDeclaration[importKind!='type'][source.value=/^node:/] > ImportNamespaceSpecifier",
          message:
            'Import a Node built-in as its default (import fs from "node:fs") or by name: `import * as` copies it.',
        },
      ],
    },
  },
  {
    // The module boundaries that matter: what the provider and the SDK export.
    files: ["provider/**/*.ts", "sdk/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unsafe-return": "error",
      "@typescript-eslint/explicit-module-boundary-types": [
        "error",
        {
          allowArgumentsExplicitlyTypedAsAny: false,
          allowTypedFunctionExpressions: true,
          allowHigherOrderFunctions: true,
          allowDirectConstAssertionInArrowFunctions: true,
        },
      ],
    },
  },
  {
    // provider/helm/ is pure helm knowledge (its README): no file system, network, process or cluster.
    files: ["provider/helm/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "node:fs",
                "node:fs/*",
                "fs",
                "node:child_process",
                "node:net",
                "node:http",
                "node:https",
                "node:os",
                "node:process",
              ],
              message: "provider/helm/ is pure: the executor (steps/helm/executor.ts) does the I/O",
            },
            {
              group: [
                "../kube/*",
                "../tools/*",
                "../steps/*",
                "../state/*",
                "../engine/*",
                "../hooks/*",
                "../dsl/*",
                "yaml",
              ],
              message: "provider/helm/ is a leaf room: only types from ../kubectl/ come in",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "process", message: "provider/helm/ is pure: pass what it needs from the environment in" },
      ],
    },
  },
);
