import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import { compileGlob, covers, missingScope, parseScope } from "../../src/server/access/scopes.js";
import { parseTokenEntry, principalResolver, tokenHashId } from "../../src/server/access/tokens.js";

describe("scope globs", () => {
  it("* matches any run (none included), ? exactly one character, the rest itself", () => {
    const g = compileGlob("orders.*");
    assert.equal(g("orders."), true);
    assert.equal(g("orders.eu.paid"), true);
    assert.equal(g("orders"), false);
    assert.equal(g("xorders.a"), false, "anchored at the start");
    const q = compileGlob("q?");
    assert.equal(q("q1"), true);
    assert.equal(q("q"), false);
    assert.equal(q("q12"), false, "anchored at the end");
    assert.equal(compileGlob("*")(""), true);
    assert.equal(compileGlob("*")("anything/at all"), true);
  });

  it("regular-expression characters in a glob are literal", () => {
    const g = compileGlob("a.b+(c)[d]|e$^");
    assert.equal(g("a.b+(c)[d]|e$^"), true);
    assert.equal(g("aXb+(c)[d]|e$^"), false, ". is not any character");
    assert.equal(compileGlob("a\\*")("a\\xyz"), true, "a backslash is literal and * still a glob");
  });

  it("parses manage, monitor, send:<glob> and listen:<glob>, and refuses anything else", () => {
    assert.equal(parseScope("manage").kind, "manage");
    assert.equal(parseScope("monitor").kind, "monitor");
    const send = parseScope("send:jobs.*");
    assert.equal(send.kind, "send");
    assert.equal(send.kind === "send" && send.match("jobs.email"), true);
    for (const bad of [
      "",
      "admin",
      "send",
      "send:",
      "listen:",
      "monitor:x",
      ":x",
      "Send:x",
      `send:${"a".repeat(257)}`,
    ]) {
      assert.throws(() => parseScope(bad), InvalidArgumentError, bad);
    }
  });
});

describe("what scopes cover", () => {
  const scopes = ["send:orders.*", "listen:work?"].map(parseScope);

  it("send and listen cover only matching names, every name of a call", () => {
    assert.equal(covers(scopes, { kind: "send", names: ["orders.eu"] }), true);
    assert.equal(covers(scopes, { kind: "send", names: ["invoices"] }), false);
    assert.equal(covers(scopes, { kind: "listen", names: ["orders.eu"] }), false, "send is not listen");
    assert.equal(covers(scopes, { kind: "listen", names: ["work1", "work2"] }), true);
    assert.equal(covers(scopes, { kind: "listen", names: ["work1", "other"] }), false);
    assert.equal(covers(scopes, { kind: "listen", names: [] }), false, "every queue needs manage");
    assert.equal(covers(scopes, { kind: "client" }), true);
    assert.equal(covers(scopes, { kind: "monitor" }), false);
    assert.equal(covers(scopes, { kind: "manage" }), false);
  });

  it("manage covers everything; monitor covers monitor only", () => {
    const manage = [parseScope("manage")];
    assert.equal(covers(manage, { kind: "listen", names: [] }), true);
    assert.equal(covers(manage, { kind: "monitor" }), true);
    const monitor = [parseScope("monitor")];
    assert.equal(covers(monitor, { kind: "monitor" }), true);
    assert.equal(covers(monitor, { kind: "send", names: ["a"] }), false);
    assert.equal(covers(monitor, { kind: "client" }), false);
  });

  it("a refusal names the scope of the first name not covered", () => {
    assert.equal(missingScope(scopes, { kind: "listen", names: ["work1", "other"] }), "listen:other");
    assert.equal(missingScope(scopes, { kind: "manage" }), "manage");
    assert.equal(missingScope(scopes, { kind: "monitor" }), "monitor");
  });
});

describe("token entries", () => {
  it("a bare token has full access; `=` starts the scope list; `name:` names it", () => {
    assert.deepEqual(parseTokenEntry("s3cret"), { token: "s3cret" });
    assert.deepEqual(parseTokenEntry("s3cret=monitor+send:a*"), {
      token: "s3cret",
      scopes: ["monitor", "send:a*"],
    });
    assert.deepEqual(parseTokenEntry("scraper:s3cret=monitor"), {
      token: "s3cret",
      name: "scraper",
      scopes: ["monitor"],
    });
    assert.deepEqual(parseTokenEntry("ops:s3cret"), { token: "s3cret", name: "ops" });
  });

  it("a token ending in = (base64 padding) keeps it; the scopes follow the last =", () => {
    assert.deepEqual(parseTokenEntry("dG9rZW4="), { token: "dG9rZW4=" });
    assert.deepEqual(parseTokenEntry("dG9rZW4==listen:q"), { token: "dG9rZW4=", scopes: ["listen:q"] });
  });

  it("resolves a presented token to its principal: name or hash prefix, never the token", () => {
    const resolve = principalResolver(["ops:aaa", "bbb=monitor+listen:q*"]);
    const ops = resolve("Bearer aaa");
    assert.equal(ops?.id, "ops");
    assert.deepEqual(ops?.scopes, ["manage"]);
    const other = resolve("bbb");
    assert.equal(other?.id, tokenHashId("bbb"));
    assert.match(other!.id!, /^sha256:[0-9a-f]{12}$/);
    assert.ok(!other!.id!.includes("bbb"));
    assert.deepEqual(other?.scopes, ["monitor", "listen:q*"]);
    assert.equal(resolve("Bearer ccc"), undefined);
    assert.equal(resolve(undefined), undefined);
  });

  it("refuses bad entries at startup: unknown scope, empty token, bad or repeated name, repeated token", () => {
    for (const entries of [
      ["t=admin"],
      ["name:=monitor"],
      ["t=send:"],
      ["a:x", "a:y"],
      ["x", "x=monitor"],
      [{ token: "x", name: "has space" }],
      [{ token: "", scopes: ["monitor"] }],
      [{ token: "x", scopes: Array.from({ length: 65 }, () => "monitor") }],
    ]) {
      assert.throws(() => principalResolver(entries), InvalidArgumentError, JSON.stringify(entries));
    }
  });

  it("takes TokenSpec objects as well as strings", () => {
    const resolve = principalResolver([{ token: "t1", name: "worker", scopes: ["listen:jobs"] }]);
    assert.deepEqual(
      { id: resolve("Bearer t1")?.id, scopes: resolve("Bearer t1")?.scopes },
      { id: "worker", scopes: ["listen:jobs"] },
    );
  });
});
