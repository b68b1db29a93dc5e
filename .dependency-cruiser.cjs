// The import rules of src/ (docs/architecture.md). Each room may import only the rooms listed
// for it; an import elsewhere fails `npm run lint`, naming the importing file.
// A room is a folder of src/; `open.ts` is the composition root (the one place that picks a
// storage dialect) and `index.ts` the public entry: both may import any room.

/** A path pattern matching the given rooms of src/ (folders, or single files such as version.ts). */
function rooms(...names) {
  return `^src/(${names.map((n) => n.replace(".", "\\.")).join("|")})(/|$)`;
}

/** Forbids `room` from importing any of our modules outside `allowed` (and itself). */
function onlyImports(room, allowed, why, except) {
  return {
    name: `${room.replace(/\W+/g, "-")}-imports`,
    comment: `${room} may import only: ${allowed.length ? allowed.join(", ") : "nothing of ours"}. ${why}`,
    severity: "error",
    from: { path: rooms(room), ...(except && { pathNot: except }) },
    to: { path: "^src/", pathNot: rooms(room, ...allowed) },
  };
}

module.exports = {
  forbidden: [
    onlyImports("contract", [], "The Broker/JobService/TopicService contract is the bottom of the graph."),
    onlyImports("filter", [], "The expr language stands alone."),
    onlyImports("version.ts", [], "The package version is a leaf."),
    onlyImports("core", ["contract", "filter"], "Driver-free broker pieces that both dialects share."),
    onlyImports(
      "store/sqlite",
      ["contract", "core", "version.ts"],
      "The SQLite dialect: connection, pragmas, migrations, SQL text, transactions; never a broker decision.",
    ),
    onlyImports(
      "store/postgres",
      ["contract", "core", "version.ts"],
      "The PostgreSQL dialect: pool, migrations, SQL text, LISTEN/NOTIFY; it never imports the SQLite dialect.",
    ),
    onlyImports("jobs", ["contract", "filter"], "The job face runs on any Broker.", "^src/jobs/index\\.ts$"),
    {
      name: "jobs-entry-imports",
      comment: "The job face's entry may also wire its default host (src/job-host.ts), nothing else.",
      severity: "error",
      from: { path: "^src/jobs/index\\.ts$" },
      to: { path: "^src/", pathNot: "^src/(jobs/|contract/|filter/|job-host\\.ts$)" },
    },
    onlyImports("wire", ["contract"], "One codec per RPC, over the contract's types."),
    onlyImports("client", ["wire", "contract", "version.ts"], "The HTTP client speaks the wire."),
    onlyImports(
      "server",
      ["wire", "contract", "mcp", "version.ts"],
      "The HTTP server speaks the wire (and serves the MCP tools over HTTP).",
    ),
    onlyImports(
      "mcp",
      ["contract", "wire", "client", "version.ts"],
      "Agents reach a broker through the contract or the client.",
    ),
    onlyImports(
      "console",
      ["contract", "wire", "client"],
      "The web console reaches a broker through the wire API only.",
    ),
    onlyImports(
      "cli",
      ["contract", "wire", "client", "server", "mcp", "open.ts", "version.ts"],
      "The CLI reaches a broker through the contract, the client or the composition root (open.ts).",
    ),
    {
      name: "no-runtime-cycles",
      comment: "Modules must not import each other at run time (type-only cycles are harmless).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { conditionNames: ["source", "import", "node", "default"] },
    reporterOptions: { text: { highlightFocused: false } },
  },
};
