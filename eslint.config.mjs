import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: [".next/**", "node_modules/**", "lib/generated/**", ".tollgate/**", "next-env.d.ts", "test/.artifacts/**", "bench/.results/**", "**/*.tmp.ts"],
  },
  {
    // Server components (pages, and the TimeAgo they render) run once per request: reading
    // the clock while rendering is the point, not an impurity that breaks re-renders.
    files: ["app/**/page.tsx", "components/ui/time-ago.tsx"],
    rules: { "react-hooks/purity": "off" },
  },
  {
    // Preloaded with `node --require` before anything is compiled: CommonJS is the point.
    files: ["lib/http/front-door.cjs"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Console links prefetch when reached for (components/ui/intent-link.tsx): a plain Link
    // prefetches its page as soon as it is shown, a server render per link per page view.
    files: ["app/t/**/*.tsx", "components/**/*.tsx"],
    ignores: ["components/ui/intent-link.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "next/link", message: "Use IntentLink (components/ui/intent-link.tsx), or Link with prefetch={false} and a comment why." }] },
      ],
    },
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
];

export default config;
