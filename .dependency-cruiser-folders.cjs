/**
 * Folders one way, checked by `pnpm lint` beside .dependency-cruiser.cjs: within the server's and
 * the agent's src, no folder may reach itself through its imports. Two folders that import each
 * other are one concept split in two, and a longer loop is the same knot drawn wider; folders can
 * loop while no module does (a/x → b/y → a/z), which the module rules cannot see. Test files are
 * left out (a test may import the folder above the one it tests; test support lives in testing/),
 * which is why this is a configuration of its own: the module rules do check test files.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const modules = require("./.dependency-cruiser.cjs");

module.exports = {
  forbidden: [
    {
      name: "folders-no-cycles",
      comment:
        "A folder owns one concept; the lower one knows nothing of the ones above it (docs/DESIGN.md has the layers).",
      severity: "error",
      scope: "folder",
      from: { path: "^packages/(server|agent)/src/[^/]+$" },
      to: { circular: true },
    },
  ],
  options: {
    ...modules.options,
    exclude: { path: [modules.options.exclude.path, "\\.test\\.ts$"] },
  },
};
