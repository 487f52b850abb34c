/**
 * Dependency rules of the workspace, checked by `pnpm lint` (depcruise). Why each rule exists is
 * in its comment; docs/DESIGN.md has the layering they enforce. That no folder of the server or the
 * agent loops back to itself is checked beside them by .dependency-cruiser-folders.cjs, whose
 * graph leaves test files out.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const SERVER = "^packages/server/src/";
// Domain folders of the server: they own a concept and its data, and know nothing of HTTP routes.
const DOMAIN =
  "(agent-channel|alerts|audit|auth|enrolment|fleet|dashboard|freshness|hosts|hub|agent-artifacts|job-page|jobs|maintenance|metrics|notifications|digest|evidence|reports|catalog|policies|restore|retries|snapshots|sources|tickers|updates)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A cycle makes two modules one: neither can be read, tested or moved alone.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "http-imports-no-domain",
      comment: "http/ is the transport layer (validation, limits, rendering); domain code sits above it.",
      severity: "error",
      from: { path: `${SERVER}http/` },
      to: { path: `${SERVER}(${DOMAIN.slice(1, -1)}|routes)/` },
    },
    {
      name: "routes-import-no-socket-layer",
      comment: "Routes speak HTTP; the agent socket layer is reached through the hub and domain modules.",
      severity: "error",
      from: { path: `${SERVER}routes/` },
      to: { path: `${SERVER}agent-channel/` },
    },
    {
      name: "routes-import-no-other-route",
      comment: "What two routes share belongs to the domain module that owns it, not to either route.",
      severity: "error",
      from: { path: `${SERVER}routes/([^/]+)\\.ts$`, pathNot: "\\.test\\.ts$" },
      to: { path: `${SERVER}routes/`, pathNot: `${SERVER}routes/$1\\.ts$` },
    },
    {
      name: "domain-imports-no-routes",
      comment: "Domain modules are used by routes, the agent channel and tickers alike.",
      severity: "error",
      from: { path: `${SERVER}${DOMAIN}/`, pathNot: "\\.test\\.ts$" },
      to: { path: `${SERVER}(routes/|app\\.ts$)` },
    },
    {
      name: "folders-one-way",
      comment:
        "Two folders that import each other are one concept split in two: the lower one (retries: pending runs and their caps) knows nothing of the one above it (sources: groups and their backups).",
      severity: "error",
      from: { path: `${SERVER}retries/`, pathNot: "\\.test\\.ts$" },
      to: { path: `${SERVER}sources/` },
    },
    {
      name: "agent-folders-one-way",
      comment:
        "The restore helper runs as its own confined process: it holds the restore rules the agent's restore job also applies, and imports nothing of the jobs above it.",
      severity: "error",
      from: { path: "^packages/agent/src/restore-helper/", pathNot: "\\.test\\.ts$" },
      to: { path: "^packages/agent/src/jobs/" },
    },
    {
      name: "packages-only-through-public-entry",
      comment:
        "A package is used through its exports; reaching into another package's files couples to its layout.",
      severity: "error",
      from: { path: "^(packages|e2e|bench)/([^/]+)/" },
      to: {
        path: "^packages/[^/]+/",
        // What each package.json's "exports" names (resolved through its "source" condition).
        pathNot: [
          "^packages/$2/",
          "^packages/[^/]+/src/index\\.ts$",
          "^packages/db/src/(migrate|testing/index)\\.ts$",
          "^packages/protocol/src/manual-timers\\.ts$",
          "^packages/protocol/fixtures/",
          "^packages/agent/(dist/bundle/|package\\.json$)",
        ],
      },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that does not resolve is a typo or a missing dependency.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(dist|node_modules|\\.turbo|\\.cache)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["source", "import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
      mainFields: ["module", "main", "types"],
    },
    extraExtensionsToScan: [".mjs"],
  },
};
