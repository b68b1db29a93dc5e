// The broker's message environment: seed 000 §7-§10 and spec mqlite.md §3.1.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  compileMessageFilter,
  FilterCompileError,
  type FilterMessage,
  FilterRuntimeError,
} from "../../src/filter/index.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2024, 2, 5, 10, 30, 0); // a Tuesday, 10:30 UTC

function msg(over: Partial<FilterMessage> = {}): FilterMessage {
  return { enqueuedAt: T0, visibleAt: T0, ...over };
}

const json = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

function matches(source: string, m: FilterMessage): boolean {
  return compileMessageFilter(source).matches(m);
}

function runtimeError(source: string, m: FilterMessage): FilterRuntimeError | undefined {
  let err: FilterRuntimeError | undefined;
  const r = compileMessageFilter(source).matches(m, (e) => {
    err = e;
  });
  assert.equal(r, false, "a filter that errors does not match");
  return err;
}

describe("seed §9 filter examples", () => {
  const gold = msg({
    subject: "orders.eu.created",
    properties: { tier: "gold", region: "eu", priority: "high" },
    contentType: "application/json",
    body: json({ amount: 250, note: "urgent delivery" }),
  });
  const plain = msg({
    subject: "payment.captured",
    properties: { tier: "silver", test: "true" },
    body: new TextEncoder().encode("hello"),
    contentType: "text/plain",
    visibleAt: T0 + 2 * DAY,
  });
  const cases: [string, boolean, boolean][] = [
    ['subject_parts[0] == "orders"', true, false],
    ['properties["tier"] == "gold" && properties["region"] == "eu"', true, false],
    ['"priority" in properties && properties["priority"] == "high"', true, false],
    ['subject startsWith "payment." and not (properties["test"] == "true")', false, false],
    ["body_size < 4096", true, true],
    ["visible_at - enqueued_at > days(1)", false, true],
    ['len(subject_parts) >= 2 && subject_parts[1] == "eu"', true, false],
    ['"amount" in body_json && body_json.amount > 100', true, false],
    ['body_text contains "urgent"', true, false],
  ];
  for (const [source, onGold, onPlain] of cases) {
    test(source, () => {
      assert.equal(matches(source, gold), onGold);
      assert.equal(matches(source, plain), onPlain);
    });
  }
  test("payment filter matches a non-test payment", () => {
    assert.equal(
      matches(
        'subject startsWith "payment." and not (properties["test"] == "true")',
        msg({ subject: "payment.x" }),
      ),
      true,
    );
  });
});

describe("spec §3.1 expressions", () => {
  const m = msg({
    subject: "orders.eu",
    properties: { region: "eu", zeta: "1" },
    body: json({ amount: 150, nested: { k: "v" }, tags: ["a", "b"] }),
    enqueuedAt: T0,
    visibleAt: T0 + 2 * DAY,
  });
  const truths = [
    'subject_parts[0] == "orders" && properties["region"] == "eu"',
    '"amount" in body_json && body_json.amount > 100',
    'body_json.nested.k == "v"',
    'body_json.tags[0] == "a"',
    'subject matches "^orders"',
    'not (properties["muted"] == "true")',
    '!("x" in properties)',
    "len(property_keys) == 2",
    "enqueued_at.Hour() >= 9 && enqueued_at.Hour() <= 21",
    "visible_at - enqueued_at > days(1)",
    'duration("1w") == days(7)',
    "minutes(60) == hours(1)",
  ];
  for (const source of truths) {
    test(source, () => assert.equal(matches(source, m), true));
  }
  test("body_text contains", () => {
    assert.equal(
      matches('body_text contains "urgent"', msg({ body: new TextEncoder().encode("very urgent") })),
      true,
    );
    assert.equal(
      matches('body_text contains "urgent"', msg({ body: new TextEncoder().encode("calm") })),
      false,
    );
  });

  const compileErrors = [
    "subject ==",
    'nope == "x"',
    "frobnicate(subject)",
    "subject",
    "body_size + 1",
    "[1,2,3]",
    "not json",
  ];
  for (const source of compileErrors) {
    test(`compile error: ${source}`, () => {
      assert.throws(
        () => compileMessageFilter(source),
        (e: unknown) => e instanceof FilterCompileError && e.code === "invalid_filter",
      );
    });
  }
});

describe("variables", () => {
  test("defaults when fields are unset", () => {
    const m = msg();
    for (const name of [
      "subject",
      "message_id",
      "correlation_id",
      "group_id",
      "reply_to",
      "content_type",
      "body_text",
    ]) {
      assert.equal(matches(`${name} == ""`, m), true, name);
    }
    assert.equal(matches("len(subject_parts) == 0", m), true);
    assert.equal(matches("body_size == 0", m), true);
    assert.equal(matches("len(body_json) == 0", m), true);
    assert.equal(matches("len(property_keys) == 0", m), true);
  });
  test("identifiers are set from the message", () => {
    const m = msg({
      messageId: "m1",
      correlationId: "c1",
      groupId: "g1",
      replyTo: "r1",
      contentType: "text/plain",
    });
    assert.equal(
      matches('message_id == "m1" && correlation_id == "c1" && group_id == "g1" && reply_to == "r1"', m),
      true,
    );
    assert.equal(matches('content_type == "text/plain"', m), true);
  });
  test("properties: missing key is the empty string, keys are sorted", () => {
    const m = msg({ properties: { b: "2", a: "1" } });
    assert.equal(matches('properties["missing"] == ""', m), true);
    assert.equal(matches("properties.missing == nil", m), false);
    assert.equal(matches('property_keys == ["a", "b"]', m), true);
    assert.equal(matches('get(properties, "missing") == ""', m), true);
  });
  test("subject_parts splits on dots", () => {
    assert.equal(matches('subject_parts == ["a", "", "b"]', msg({ subject: "a..b" })), true);
  });
  test("times are UTC with methods and arithmetic", () => {
    const m = msg({ visibleAt: T0 + 90 * 60_000 });
    assert.equal(matches('enqueued_at.Weekday().String() == "Tuesday"', m), true);
    assert.equal(
      matches("enqueued_at.Year() == 2024 && int(enqueued_at.Month()) == 3 && enqueued_at.Day() == 5", m),
      true,
    );
    assert.equal(matches("visible_at - enqueued_at == minutes(90)", m), true);
    assert.equal(matches('enqueued_at.Location().String() == "UTC"', m), true);
    assert.equal(matches('enqueued_at == date("2024-03-05T10:30:00Z")', m), true);
    assert.equal(matches("enqueued_at + hours(1) < visible_at", m), true);
  });
  test("epoch milliseconds keep their sub-second part", () => {
    assert.equal(matches("enqueued_at.Nanosecond() == 123000000", msg({ enqueuedAt: T0 + 123 })), true);
  });
});

describe("body_json", () => {
  test("decoded for JSON and unset content types, numbers are floats", () => {
    assert.equal(matches("body_json.n == 2", msg({ body: json({ n: 2 }) })), true);
    assert.equal(matches('type(body_json.n) == "float"', msg({ body: json({ n: 2 }) })), true);
    assert.equal(
      matches(
        "body_json.n == 2",
        msg({ body: json({ n: 2 }), contentType: "Application/JSON; charset=utf-8" }),
      ),
      true,
    );
    assert.equal(
      matches("body_json.n == 2", msg({ body: json({ n: 2 }), contentType: "application/vnd.api+json" })),
      true,
    );
  });
  test("non-JSON type, empty, invalid or non-object bodies give {}", () => {
    const empty = "len(body_json) == 0";
    assert.equal(matches(empty, msg({ body: json({ n: 2 }), contentType: "text/plain" })), true);
    assert.equal(matches(empty, msg({ body: new Uint8Array() })), true);
    assert.equal(matches(empty, msg({ body: new TextEncoder().encode("{not json") })), true);
    assert.equal(matches(empty, msg({ body: json([1, 2]) })), true);
    assert.equal(matches(empty, msg({ body: json("str") })), true);
    assert.equal(matches(empty, msg({ body: json(null) })), true);
  });
  test("a missing field compared with a number fails closed", () => {
    const err = runtimeError("body_json.amount > 100", msg({ body: json({ other: 1 }) }));
    assert.ok(err instanceof FilterRuntimeError);
    assert.equal(err?.code, "filter_runtime");
  });
  test("% on a JSON number is a runtime error (floats)", () => {
    assert.ok(runtimeError("body_json.n % 2 == 0", msg({ body: json({ n: 4 }) })));
    assert.equal(matches("int(body_json.n) % 2 == 0", msg({ body: json({ n: 4 }) })), true);
  });
});

describe("duration helpers", () => {
  const m = msg();
  const truths = [
    "seconds(60) == minutes(1)",
    "hours(24) == days(1)",
    "weeks(1) == days(7)",
    'duration("1d12h") == hours(36)',
    'duration("1.5d") == hours(36)',
    'duration("+1h") == hours(1)',
    'duration("-1h") < seconds(0)',
    'duration("0") == seconds(0)',
    'duration("1w2d") == days(9)',
    'duration("90m") == minutes(90)',
    'duration("500ms") < seconds(1)',
    'duration("1us") == duration("1µs")',
    'duration("1ns") > seconds(0)',
  ];
  for (const source of truths) test(source, () => assert.equal(matches(source, m), true));
  for (const bad of ["1mo", "1y", "", "d", "1", "1x", ".d", "1d-"]) {
    test(`duration(${JSON.stringify(bad)}) fails closed`, () => {
      assert.ok(runtimeError(`duration(${JSON.stringify(bad)}) > seconds(0)`, m));
    });
  }
  test("helpers take ints only", () => {
    assert.throws(() => compileMessageFilter("days(1.5) > hours(1)"), FilterCompileError);
    assert.throws(() => compileMessageFilter('days("1") > hours(1)'), FilterCompileError);
  });
});

describe("contract", () => {
  test("an empty or blank filter matches everything", () => {
    for (const source of ["", "   ", "\n\t", undefined, null]) {
      const f = compileMessageFilter(source);
      assert.equal(f.matchesAll, true);
      assert.equal(f.matches(msg()), true);
    }
  });
  test("the result must be a boolean", () => {
    assert.throws(() => compileMessageFilter("body_size"), FilterCompileError);
    assert.throws(() => compileMessageFilter('"x"'), FilterCompileError);
    // A dynamic non-boolean result is a run-time error; nil is false.
    assert.ok(runtimeError("body_json.n", msg({ body: json({ n: 1 }) })));
    assert.equal(matches("body_json.missing", msg({ body: json({ n: 1 }) })), false);
    assert.equal(matches("body_json.flag", msg({ body: json({ flag: true }) })), true);
  });
  test("fail-closed on a runtime error, reported to onError", () => {
    const err = runtimeError('subject_parts[3] == "x"', msg({ subject: "a.b" }));
    assert.ok(err instanceof FilterRuntimeError);
    assert.match(err?.message ?? "", /index out of range/);
  });
  test("a throwing onError does not escape", () => {
    const f = compileMessageFilter('subject_parts[3] == "x"');
    assert.equal(
      f.matches(msg({ subject: "a" }), () => {
        throw new Error("boom");
      }),
      false,
    );
  });
  test("limits: 4096 bytes and 1000 nodes by default, configurable", () => {
    const long = `subject == "${"x".repeat(5000)}"`;
    assert.throws(() => compileMessageFilter(long), FilterCompileError);
    assert.equal(compileMessageFilter(long, { maxSourceBytes: 10_000 }).matchesAll, false);
    const many = `len([${Array.from({ length: 1500 }, () => "1").join(",")}]) == 0`;
    assert.throws(() => compileMessageFilter(many), /maximum allowed nodes/);
    assert.equal(compileMessageFilter(many, { maxNodes: 5000 }).matches(msg()), false);
    // `$env.name` reads one variable, not the whole environment.
    assert.equal(compileMessageFilter('$env.subject == ""').readsBody, false);
  });
  test("builtins and now() are available", () => {
    assert.equal(matches("now() > enqueued_at", msg()), true);
    assert.equal(
      matches('upper(subject) == "A.B" && all(subject_parts, len(#) == 1)', msg({ subject: "a.b" })),
      true,
    );
  });
});

describe("body decoding only when referenced", () => {
  function trappedMessage(counter: { reads: number }): FilterMessage {
    const m = msg({ subject: "orders.eu", properties: { tier: "gold" } });
    Object.defineProperty(m, "body", {
      enumerable: true,
      get() {
        counter.reads++;
        throw new Error("the body must not be read");
      },
    });
    return m;
  }
  test("a filter that does not mention the body never reads it", () => {
    const counter = { reads: 0 };
    const sources = [
      'subject_parts[0] == "orders" && properties["tier"] == "gold"',
      'subject matches "^orders" && enqueued_at <= visible_at',
      'len(property_keys) == 1 && message_id == ""',
    ];
    for (const source of sources) {
      const f = compileMessageFilter(source);
      assert.equal(f.readsBody, false);
      let error: unknown;
      assert.equal(
        f.matches(trappedMessage(counter), (e) => {
          error = e;
        }),
        true,
        String(error),
      );
    }
    assert.equal(counter.reads, 0);
  });
  test("body_size reads the body length but not its content", () => {
    const f = compileMessageFilter("body_size > 2");
    assert.equal(f.readsBody, false);
    let decoded = 0;
    const body = new Uint8Array(10);
    const spy = new Proxy(body, {
      get(target, prop, receiver) {
        if (prop !== "length") decoded++;
        void receiver;
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    assert.equal(f.matches(msg({ body: spy })), true);
    assert.equal(decoded, 0);
  });
  test("filters that mention the body read it", () => {
    for (const source of ['body_text == ""', "len(body_json) == 0", 'len($env) > 0 || subject == ""']) {
      const f = compileMessageFilter(source);
      assert.equal(f.readsBody, true, source);
      const counter = { reads: 0 };
      f.matches(trappedMessage(counter));
      assert.ok(counter.reads > 0, source);
    }
  });
});
