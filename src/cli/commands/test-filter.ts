import type { Command } from "commander";
import type { FilterSample, TestFilterResult } from "../../contract/types.js";
import { CommandError } from "../errors.js";
import { bodyInput } from "../input/message-flags.js";
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

/**
 * The sample message the flags and the body words describe, or undefined when none was
 * described (compile only). As the original, a subject, group or properties alone make a sample.
 */
async function sample(words: string[], f: TestFilterFlags): Promise<FilterSample | undefined> {
  const s: FilterSample = {};
  if (f.subject !== undefined) s.subject = f.subject;
  if (f.group !== undefined) s.groupId = f.group;
  if (f.prop) s.properties = f.prop;
  if (f.contentType !== undefined) s.contentType = f.contentType;
  if (f.body !== undefined) s.body = f.body;
  if (words.length > 0 || f.file !== undefined) {
    const input = bodyInput(words, f);
    s.body = "text" in input ? input.text : await readAll(input);
  }
  return Object.keys(s).length > 0 ? s : undefined;
}

function verdict(r: TestFilterResult): string {
  if (!r.valid) return `invalid: ${r.error ?? "?"}`;
  if (!r.ran) return "valid";
  if (r.error) return `valid; evaluating it failed (not routed): ${r.error}`;
  return r.matched ? "valid; matched (would route)" : "valid; not matched (filtered out)";
}

function originalText(r: TestFilterResult): string {
  if (!r.ran) return "ok: expression is valid (no sample given)";
  return r.matched ? "ok: valid; sample MATCHED" : "ok: valid; sample did NOT match";
}

/** The original's failure for an invalid filter or one that fails on the sample (exit 1). */
function outcomeError(r: TestFilterResult): CommandError | undefined {
  if (!r.valid) return new CommandError("invalid_argument", `invalid filter: ${r.error ?? ""}`);
  if (r.ran && r.error)
    return new CommandError("invalid_argument", `filter errored on the sample: ${r.error}`);
  return undefined;
}

/** `mqlite test-filter <expr> [body…]`: compiles a filter, and runs it against a sample when one is given. */
export function registerTestFilter(program: Command): void {
  const cmd = program
    .command("test-filter")
    .summary("check a filter, optionally on a sample message")
    .description("check a subscription filter, and run it on a sample message when one is described")
    .argument("<expr>", "expr filter, e.g. 'subject_parts[0] == \"orders\"'")
    .argument("[body...]", "sample body (words joined by spaces), or - to read stdin")
    .option("--subject <subject>", "sample subject")
    .option("--group <id>", "sample group id")
    .option("--prop <k=v,...>", "sample properties (repeatable)", properties)
    .option("--content-type <type>", "sample content type")
    .option("--body <text>", "sample body (as the positional body)")
    .option("--file <path>", "sample body from a file")
    .addHelpText(
      "after",
      `
Exit status: 1 when the expression is invalid or fails on the sample, 0 otherwise (matched or not).
Example:
  mqlite test-filter 'body_json.amount > 100' '{"amount":250}'`,
    );
  addBrokerOptions(cmd).action(async (expr: string, words: string[], flags: TestFilterFlags) => {
    const message = await sample(words, flags);
    const r = await withBroker(flags, (broker) => broker.testFilter(expr, message));
    const failure = outcomeError(r);
    const json = { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched };
    if (flags.output === "human") {
      await emit(flags, { text: "", json, human: () => verdict(r) });
      if (failure) process.exitCode = 1;
      return;
    }
    // The original prints nothing in text mode on failure; JSON is printed first, then the error.
    if (!failure || flags.output !== "text") await emit(flags, { text: originalText(r), json });
    if (failure) throw failure;
  });
}
