// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "bench/results/", "scratch/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", AbortController: "readonly", AbortSignal: "readonly", Buffer: "readonly", setInterval: "readonly", clearInterval: "readonly", structuredClone: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", performance: "readonly" } },
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
  // A function longer than a screenful or three holds several concepts: split it (issue 27).
  { files: ["src/**"], rules: { "max-lines-per-function": ["error", { max: 150, skipBlankLines: true, skipComments: true }] } },
  // The CLI, benchmarks, tools and tests talk to a terminal on purpose.
  { files: ["src/cli/**", "bench/**", "test/**", "scripts/**"], rules: { "no-console": "off" } },
);
