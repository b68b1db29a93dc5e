/**
 * The broker's message environment for subscription filters: the variables a filter sees, the
 * duration helpers, and the fail-closed boolean contract.
 */

import { FilterRuntimeError } from "./errors.js";
import { type CompiledProgram, compile, type FilterFunction, type Program } from "./program.js";
import { floatJson, fromJSON } from "./runtime/json.js";
import { decodeUtf8 } from "./runtime/utf8.js";
import {
  Duration,
  intFromBig,
  intMul,
  isIntValue,
  type PlainMap,
  stringMap,
  type Value,
} from "./runtime/values.js";
import { EXTENDED_DURATION_UNITS, parseDuration } from "./time/duration.js";
import { GoTime } from "./time/go-time.js";
import { UTC } from "./time/zones.js";
import type { FilterType } from "./types.js";

/** What a filter sees of a message. */
export interface FilterMessage {
  subject?: string;
  properties?: Record<string, string>;
  messageId?: string;
  correlationId?: string;
  groupId?: string;
  replyTo?: string;
  contentType?: string;
  body?: Uint8Array;
  /** Publish instant, epoch milliseconds. */
  enqueuedAt: number;
  /** Scheduled delivery instant (or enqueuedAt), epoch milliseconds. */
  visibleAt: number;
}

/** A compiled subscription filter. */
export interface MessageFilter {
  /** The filter's source text. */
  readonly source: string;
  /** True for an empty or blank filter, which matches every message without running anything. */
  readonly matchesAll: boolean;
  /** True when the filter reads `body_text`, `body_json` or `$env` (so the body is decoded). */
  readonly readsBody: boolean;
  /**
   * Runs the filter. A run-time error means "no match" (fail-closed); the error is passed to
   * `onError` when given.
   */
  matches(msg: FilterMessage, onError?: (err: FilterRuntimeError) => void): boolean;
}

/** Options of {@link compileMessageFilter}. */
export interface MessageFilterOptions {
  /** Source length cap in UTF-8 bytes (default 4096). */
  maxSourceBytes?: number;
  /** AST node cap (default 1000). */
  maxNodes?: number;
}

/** Declared types of the message environment. */
export const MESSAGE_ENV_TYPES: Readonly<Record<string, FilterType>> = Object.freeze<
  Record<string, FilterType>
>({
  subject: "string",
  subject_parts: { array: "string" },
  properties: { map: "string" },
  property_keys: { array: "string" },
  message_id: "string",
  correlation_id: "string",
  group_id: "string",
  reply_to: "string",
  content_type: "string",
  body_size: "int",
  body_text: "string",
  body_json: { map: "any" },
  enqueued_at: "time",
  visible_at: "time",
});

const NS_PER_SECOND = 1_000_000_000;

function durationHelper(name: string, nanosPerUnit: number): FilterFunction {
  return {
    params: ["int"],
    result: "duration",
    call: (n: Value) => {
      if (!isIntValue(n)) throw new FilterRuntimeError(`${name}: expected an int`);
      return new Duration(intMul(n, nanosPerUnit));
    },
  };
}

/** Helpers of the message environment: int → duration, and duration() with days and weeks. */
export const MESSAGE_FUNCTIONS: Readonly<Record<string, FilterFunction>> = Object.freeze({
  seconds: durationHelper("seconds", NS_PER_SECOND),
  minutes: durationHelper("minutes", 60 * NS_PER_SECOND),
  hours: durationHelper("hours", 3600 * NS_PER_SECOND),
  days: durationHelper("days", 86400 * NS_PER_SECOND),
  weeks: durationHelper("weeks", 7 * 86400 * NS_PER_SECOND),
  duration: {
    params: ["string"],
    result: "duration",
    call: (s: Value) => {
      if (typeof s !== "string") throw new FilterRuntimeError("duration: expected a string");
      return new Duration(intFromBig(parseDuration(s, EXTENDED_DURATION_UNITS)));
    },
  },
});

const BODY_NAMES = new Set(["body_text", "body_json", "$env"]);
const EMPTY_BODY = new Uint8Array(0);
const EMPTY_STRINGS: readonly string[] = Object.freeze([]);

function looksLikeJson(contentType: string | undefined): boolean {
  return !contentType || contentType.toLowerCase().includes("json");
}

function bodyJson(msg: FilterMessage, text: string): PlainMap {
  if (!looksLikeJson(msg.contentType) || text === "") return {};
  let v: Value;
  try {
    v = fromJSON(text);
  } catch {
    return {};
  }
  return isJsonObject(v) ? v : {};
}

function isJsonObject(v: unknown): v is PlainMap {
  return (
    v !== null && typeof v === "object" && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype
  );
}

/**
 * A message's body as its filters see it, decoded at most once for all of them: the text, and
 * `body_json`. The JSON is parsed natively, then its numbers are turned into the language's floats
 * lazily, one top-level key at a time: a filter that reads only `body_json.amount` converts only
 * that value. A filter that uses `body_json` as a whole converts everything.
 */
class DecodedBody {
  private text: string | undefined;
  /** The parsed object; its values under `converted` keys (or all, once `whole`) are converted. */
  private json: PlainMap | undefined;
  private readonly converted = new Set<string>();
  private whole = false;

  constructor(private readonly m: FilterMessage) {}

  bodyText(): string {
    if (this.text === undefined) this.text = decodeUtf8(this.m.body ?? EMPTY_BODY);
    return this.text;
  }

  /** `body_json`, with at least the values of `keys` converted (all of them when undefined). */
  bodyJson(keys: ReadonlySet<string> | undefined): PlainMap {
    let json = this.json;
    if (json === undefined) json = this.json = this.parse();
    if (this.whole) return json;
    if (keys === undefined) {
      for (const k of Object.keys(json)) this.convert(json, k);
      this.whole = true;
    } else {
      for (const k of keys) this.convert(json, k);
    }
    return json;
  }

  private convert(json: PlainMap, key: string): void {
    if (this.converted.has(key)) return;
    this.converted.add(key);
    if (Object.hasOwn(json, key)) json[key] = floatJson(json[key] as unknown);
  }

  private parse(): PlainMap {
    const text = this.bodyText();
    if (!looksLikeJson(this.m.contentType) || text === "") return {};
    // A "__proto__" key, or a number too large for a float (which makes the whole body invalid,
    // as in Go), needs the full decoder: both are rare, so they take the slow path.
    if (text.includes("__proto__") || MAYBE_OVERFLOW.test(text)) {
      this.whole = true;
      return bodyJson(this.m, text);
    }
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return {};
    }
    return isJsonObject(v) ? v : {};
  }
}

/** A number that may not fit a float64: an exponent of three digits or more, or 309 digits. */
const MAYBE_OVERFLOW = /\d[eE]\+?\d{3}|\d{309}/;

/**
 * Where a message's decoded body is kept: on the filter input itself, so it lives exactly as long
 * as the input (a WeakMap would do the same at a higher garbage-collection cost).
 */
const DECODED_BODY: unique symbol = Symbol("decoded body");

function decodedBody(m: FilterMessage): DecodedBody {
  const holder = m as FilterMessage & { [DECODED_BODY]?: DecodedBody };
  let d = holder[DECODED_BODY];
  if (d === undefined) {
    d = new DecodedBody(m);
    // A frozen input cannot keep it: then each filter decodes for itself.
    if (Object.isExtensible(holder)) Object.defineProperty(holder, DECODED_BODY, { value: d });
  }
  return d;
}

function subjectParts(subject: string): string[] {
  return subject === "" ? [] : subject.split(".");
}

/** Builders of each variable, so a run computes only what the program reads. */
const VARIABLES: Record<string, (m: FilterMessage) => Value> = {
  subject: (m) => m.subject ?? "",
  subject_parts: (m) => subjectParts(m.subject ?? ""),
  properties: (m) => (m.properties ? stringMap(m.properties) : stringMap({})),
  property_keys: (m) => (m.properties ? Object.keys(m.properties).sort() : (EMPTY_STRINGS as string[])),
  message_id: (m) => m.messageId ?? "",
  correlation_id: (m) => m.correlationId ?? "",
  group_id: (m) => m.groupId ?? "",
  reply_to: (m) => m.replyTo ?? "",
  content_type: (m) => m.contentType ?? "",
  body_size: (m) => (m.body ?? EMPTY_BODY).length,
  enqueued_at: (m) => GoTime.fromEpochMs(m.enqueuedAt, UTC),
  visible_at: (m) => GoTime.fromEpochMs(m.visibleAt, UTC),
};

/** Builds the environment of a message, with only the given variables. */
export function messageEnv(msg: FilterMessage, names: ReadonlySet<string> | "all"): Record<string, Value> {
  const env: Record<string, Value> = {};
  const all = names === "all" || names.has("$env");
  for (const name of Object.keys(VARIABLES)) {
    if (all || (names as ReadonlySet<string>).has(name))
      env[name] = (VARIABLES[name] as (m: FilterMessage) => Value)(msg);
  }
  const wantText = all || (names as ReadonlySet<string>).has("body_text");
  const wantJson = all || (names as ReadonlySet<string>).has("body_json");
  if (wantText || wantJson) {
    const text = decodeUtf8(msg.body ?? EMPTY_BODY);
    if (wantText) env.body_text = text;
    if (wantJson) env.body_json = bodyJson(msg, text);
  }
  return env;
}

const EMPTY_PROPERTIES: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * The environment of one message as a view: each variable is computed when the program reads it,
 * and the body is decoded at most once. One small allocation per run.
 */
class MessageEnvView {
  constructor(
    private readonly m: FilterMessage,
    /** Give `properties` as a typed map (missing keys read "") even through untyped positions. */
    private readonly typedProperties: boolean,
    /** The only keys of `body_json` the program reads, when it reads no other part of it. */
    private readonly jsonKeys: ReadonlySet<string> | undefined,
  ) {}

  get subject(): string {
    return this.m.subject ?? "";
  }
  get subject_parts(): string[] {
    return subjectParts(this.m.subject ?? "");
  }
  get properties(): PlainMap {
    const p = this.m.properties ?? EMPTY_PROPERTIES;
    // Statically typed reads give "" for a missing key without copying the map.
    return this.typedProperties ? stringMap(p) : (p as PlainMap);
  }
  get property_keys(): string[] {
    return this.m.properties ? Object.keys(this.m.properties).sort() : [];
  }
  get message_id(): string {
    return this.m.messageId ?? "";
  }
  get correlation_id(): string {
    return this.m.correlationId ?? "";
  }
  get group_id(): string {
    return this.m.groupId ?? "";
  }
  get reply_to(): string {
    return this.m.replyTo ?? "";
  }
  get content_type(): string {
    return this.m.contentType ?? "";
  }
  get body_size(): number {
    return (this.m.body ?? EMPTY_BODY).length;
  }
  get enqueued_at(): GoTime {
    return GoTime.fromEpochMs(this.m.enqueuedAt, UTC);
  }
  get visible_at(): GoTime {
    return GoTime.fromEpochMs(this.m.visibleAt, UTC);
  }
  get body_text(): string {
    return decodedBody(this.m).bodyText();
  }
  get body_json(): PlainMap {
    return decodedBody(this.m).bodyJson(this.jsonKeys);
  }
}

/** Builds a function that runs the program on a message's environment. */
function makeRunner(program: Program): (msg: FilterMessage) => Value {
  if (program.referencedNames.has("$env")) return (msg) => program.run(messageEnv(msg, "all"));
  const compiled = program as CompiledProgram;
  const typed = compiled.escaping.has("properties");
  const jsonKeys = compiled.keysRead.get("body_json") ?? undefined;
  return (msg) => program.run(new MessageEnvView(msg, typed, jsonKeys) as unknown as Record<string, Value>);
}

/**
 * Compiles a subscription filter against the message environment, requiring a boolean result.
 * An empty, blank, null or undefined source matches every message.
 *
 * @throws FilterCompileError for a bad filter (syntax, unknown name, non-boolean result, caps).
 */
export function compileMessageFilter(
  source: string | undefined | null,
  opts: MessageFilterOptions = {},
): MessageFilter {
  const text = source ?? "";
  if (text.trim() === "") {
    return { source: text, matchesAll: true, readsBody: false, matches: () => true };
  }
  const program = compile(text, {
    env: MESSAGE_ENV_TYPES,
    functions: MESSAGE_FUNCTIONS,
    expect: "bool",
    maxSourceBytes: opts.maxSourceBytes ?? 4096,
    maxNodes: opts.maxNodes ?? 1000,
    maxSteps: 1_000_000,
  });
  const readsBody = [...program.referencedNames].some((n) => BODY_NAMES.has(n));
  const run = makeRunner(program);
  return {
    source: text,
    matchesAll: false,
    readsBody,
    matches(msg: FilterMessage, onError?: (err: FilterRuntimeError) => void): boolean {
      try {
        return run(msg) === true;
      } catch (e) {
        const err =
          e instanceof FilterRuntimeError
            ? e
            : new FilterRuntimeError(e instanceof Error ? e.message : String(e));
        if (onError) {
          try {
            onError(err);
          } catch {
            // A failing error callback must not turn a non-match into a crash.
          }
        }
        return false;
      }
    },
  };
}
