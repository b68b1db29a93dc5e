import type { Command } from "commander";
import type { FilterSample, TestFilterResult } from "../../contract/types.js";
import { readAll } from "../input/read.js";
import { addBrokerOptions, type BrokerFlags, properties } from "../options.js";
import { emit, withBroker } from "../run.js";

interface TestFilterFlags extends BrokerFlags {
  subject?: string;
  group?: string;
  prop?: Record<string, string>;
  file?: string;
  body?: string;
  contentType?: string;
}

/** The sample message the flags describe, or undefined when none was described (compile only). */
async function sample(f: TestFilterFlags): Promise<FilterSample | undefined> {
  const s: FilterSample = {};
  if (f.subject !== undefined) s.subject = f.subject;
  if (f.group !== undefined) s.groupId = f.group;
  if (f.prop) s.properties = f.prop;
  if (f.contentType !== undefined) s.contentType = f.contentType;
  if (f.body !== undefined) s.body = f.body;
  if (f.file !== undefined) s.body = await readAll({ kind: "file", path: f.file });
  return Object.keys(s).length > 0 ? s : undefined;
}

function verdict(r: TestFilterResult): string {
  if (!r.valid) return `invalid: ${r.error ?? "?"}`;
  if (!r.ran) return "valid";
  if (r.error) return `valid; evaluating it failed (not routed): ${r.error}`;
  return r.matched ? "valid; matched (would route)" : "valid; not matched (filtered out)";
}

/** `mqlite test-filter <expr>`: compiles a filter, and runs it against a sample when one is given. */
export function registerTestFilter(program: Command): void {
  const cmd = program
    .command("test-filter")
    .summary("check a filter, optionally on a sample message")
    .description("check a subscription filter, and run it on a sample message when one is described")
    .argument("<expr>", "expr filter, e.g. 'subject_parts[0] == \"orders\"'")
    .option("--subject <subject>", "sample subject")
    .option("--group <id>", "sample group id")
    .option("--prop <k=v,...>", "sample properties (repeatable)", properties)
    .option("--content-type <type>", "sample content type")
    .option("--body <text>", "sample body")
    .option("--file <path>", "sample body from a file")
    .addHelpText(
      "after",
      `
Exit status: 1 when the expression is invalid or fails on the sample, 0 otherwise (matched or not).
Example:
  mqlite test-filter 'body_json.amount > 100' --body '{"amount":250}'`,
    );
  addBrokerOptions(cmd).action(async (expr: string, flags: TestFilterFlags) => {
    const message = await sample(flags);
    const r = await withBroker(flags, (broker) => broker.testFilter(expr, message));
    await emit(
      flags,
      { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched },
      () => verdict(r),
    );
    if (!r.valid || r.error) process.exitCode = 1;
  });
}
