import type { Command } from "commander";
import type { OutgoingMessage } from "../../contract/types.js";
import { UsageError } from "../errors.js";
import { properties } from "../options.js";
import type { Source } from "./read.js";

/** The per-message flags of `send` and `schedule`. */
export interface MessageFlags {
  file?: string;
  messageId?: string;
  group?: string;
  subject?: string;
  replyTo?: string;
  contentType?: string;
  correlationId?: string;
  prop?: Record<string, string>;
}

/** Adds `--file` and the message metadata flags. */
export function addMessageOptions(cmd: Command): Command {
  return cmd
    .option("--file <path>", "read the body (or, with --lines/--ndjson, the messages) from a file")
    .option("--message-id <id>", "message id (the dedup key when the queue has a window)")
    .option("--group <id>", "ordering group: same-group messages are delivered in order")
    .option("--subject <subject>", "dotted label filters can match, e.g. orders.eu.created")
    .option("--reply-to <name>", "where replies should go")
    .option("--content-type <type>", "content type, e.g. application/json")
    .option("--correlation-id <id>", "correlation id")
    .option("--prop <k=v,...>", "application properties (repeatable)", properties);
}

/** The metadata the flags give (no body). */
export function metadata(f: MessageFlags): OutgoingMessage {
  const m: OutgoingMessage = {};
  if (f.messageId) m.messageId = f.messageId;
  if (f.group) m.groupId = f.group;
  if (f.subject) m.subject = f.subject;
  if (f.replyTo) m.replyTo = f.replyTo;
  if (f.contentType) m.contentType = f.contentType;
  if (f.correlationId) m.correlationId = f.correlationId;
  if (f.prop && Object.keys(f.prop).length > 0) m.properties = f.prop;
  return m;
}

/** True when any per-message flag is set. */
export function hasMetadata(f: MessageFlags): boolean {
  return Object.keys(metadata(f)).length > 0;
}

/**
 * Where the body comes from, as the original reads it: the positional words joined by single
 * spaces (`send q hello world` sends `hello world`), `-` (stdin; later words ignored) or `--file`;
 * exactly one. Returns the literal text, or the source to read.
 */
export function bodyInput(words: string[], f: MessageFlags): { text: string } | Source {
  if (words.length > 0 && f.file !== undefined)
    throw new UsageError("give the body either as an argument or with --file, not both");
  if (f.file !== undefined) return { kind: "file", path: f.file };
  if (words.length === 0) throw new UsageError("no body given (provide a body argument, --file, or '-')");
  if (words[0] === "-") return { kind: "stdin" };
  return { text: words.join(" ") };
}
