import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

// `npm run lint` runs dependency-cruiser with this config over src/; these tests place one upward
// import in a room and check that the same command refuses it and names the file. The probe goes
// into a copy of the tree: written into src/ itself, it was seen (and then missed) by other tests
// that read every source file while it briefly existed.
const root = join(import.meta.dirname, "..", "..");
const depcruise = join(root, "node_modules", ".bin", "depcruise");

function cruiseProbe(room: string, source: string): { status: number | null; output: string; file: string } {
  const tree = mkdtempSync(join(tmpdir(), "mqlite-import-rules-"));
  try {
    cpSync(join(root, "src"), join(tree, "src"), { recursive: true });
    for (const f of [".dependency-cruiser.cjs", "tsconfig.json", "package.json"])
      cpSync(join(root, f), join(tree, f));
    const file = `src/${room}/upward-probe-${randomUUID().slice(0, 8)}.ts`;
    writeFileSync(join(tree, file), source);
    const run = spawnSync(depcruise, [file, "--config", ".dependency-cruiser.cjs", "--output-type", "err"], {
      cwd: tree,
      encoding: "utf8",
    });
    return { status: run.status, output: `${run.stdout}${run.stderr}`, file };
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

test("lint fails on an upward import from contract into the SQLite dialect, naming the file", () => {
  const probe = cruiseProbe(
    "contract",
    'import type { SqliteBroker } from "../store/sqlite/sqlite-broker.js";\nexport type Probe = SqliteBroker;\n',
  );
  assert.notEqual(probe.status, 0, probe.output);
  assert.match(probe.output, /contract-imports/);
  assert.ok(probe.output.includes(`${probe.file} → src/store/sqlite/sqlite-broker.ts`), probe.output);
});

test("lint fails when the job face imports SQLite storage, naming the file", () => {
  const probe = cruiseProbe(
    "jobs",
    'import type { SqliteDatabase } from "../store/sqlite/database.js";\nexport type Probe = SqliteDatabase;\n',
  );
  assert.notEqual(probe.status, 0, probe.output);
  assert.match(probe.output, /jobs-imports/);
  assert.ok(probe.output.includes(`${probe.file} → src/store/sqlite/database.ts`), probe.output);
});

test("a file that imports only what its room allows passes", () => {
  const probe = cruiseProbe(
    "jobs",
    'import type { Broker } from "../contract/broker.js";\nexport type Probe = Broker;\n',
  );
  assert.equal(probe.status, 0, probe.output);
});

test("lint fails when one dialect imports the other, naming the file", () => {
  const probe = cruiseProbe(
    "store/postgres",
    'import type { SqliteDatabase } from "../sqlite/database.js";\nexport type Probe = SqliteDatabase;\n',
  );
  assert.notEqual(probe.status, 0, probe.output);
  assert.match(probe.output, /store-postgres-imports/);
  assert.ok(probe.output.includes(`${probe.file} → src/store/sqlite/database.ts`), probe.output);
});
