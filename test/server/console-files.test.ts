import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { buildConsole, consoleIsStale, referencedAssets } from "../../src/console/build.js";
import { pickEncoding } from "../../src/server/ui-files.js";
import { type Served, serve } from "./harness.js";

const SECURITY = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** Raw GET (no automatic decompression: node's fetch would undo Content-Encoding). */
async function raw(url: string, headers: Record<string, string> = {}) {
  const { request } = await import("node:http");
  return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers as Record<string, string>,
          body: Buffer.concat(chunks),
        }),
      );
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

describe("the console's build and how /ui serves it", () => {
  let dir: string;
  let s: Served;
  let script: string;
  let stylesheet: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "mqlite-ui-build-"));
    writeFileSync(join(dir, "app.js"), "stale"); // an older build's plain name
    await buildConsole(dir);
    [stylesheet, script] = referencedAssets(readFileSync(join(dir, "index.html"), "utf8")) as [
      string,
      string,
    ];
    s = await serve({ ui: { dir } });
  });
  after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names the bundle and the stylesheet by content hash, precompresses them, and leaves no old file", () => {
    assert.match(script, /^app-[A-Z0-9]{8}\.js$/);
    assert.match(stylesheet, /^styles-[A-Z0-9]{8}\.css$/);
    const files = readdirSync(dir).sort();
    for (const f of [script, stylesheet]) {
      assert.ok(files.includes(`${f}.br`) && files.includes(`${f}.gz`), f);
    }
    assert.ok(!files.includes("app.js"), "the plain name of an older build is gone");
    assert.ok(!readFileSync(join(dir, script), "utf8").includes("sourceMappingURL"), "no file links the map");
    assert.equal(consoleIsStale(dir), false);
  });

  it("sends the security headers on every /ui answer: page, asset, redirect, miss", async () => {
    for (const path of ["/ui/", `/ui/${script}`, "/ui", "/ui/missing.js"]) {
      const res = await raw(s.url + path);
      for (const [name, value] of Object.entries(SECURITY))
        assert.equal(res.headers[name], value, `${path} ${name}`);
      const csp = res.headers["content-security-policy"] ?? "";
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.ok(!/script-src[^;]*'unsafe-inline'/.test(csp), "no inline script");
    }
  });

  it("the page has no inline script (the CSP would refuse it)", async () => {
    const html = (await raw(`${s.url}/ui/`)).body.toString();
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]![1]!, /src="\.\/app-[A-Z0-9]{8}\.js"/);
    assert.equal(scripts[0]![2]!.trim(), "");
    assert.ok(!/ on[a-z]+=/.test(html), "no inline event handler");
  });

  it("caches hashed names for a year and revalidates index.html", async () => {
    const page = await raw(`${s.url}/ui/`);
    assert.equal(page.headers["cache-control"], "no-cache");
    assert.ok(page.headers.etag);
    const asset = await raw(`${s.url}/ui/${script}`);
    assert.equal(asset.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.match(asset.headers["content-type"] ?? "", /^text\/javascript/);
    const again = await raw(`${s.url}/ui/${script}`, { "if-none-match": asset.headers.etag! });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  it("compresses with brotli or gzip as accepted, and sends the same bytes", async () => {
    const plain = await raw(`${s.url}/ui/${script}`);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.headers.vary, "Accept-Encoding");
    const br = await raw(`${s.url}/ui/${script}`, { "accept-encoding": "gzip, deflate, br" });
    assert.equal(br.headers["content-encoding"], "br");
    assert.ok(br.body.length < plain.body.length / 2, `${br.body.length} of ${plain.body.length}`);
    assert.deepEqual(brotliDecompressSync(br.body), plain.body);
    const gz = await raw(`${s.url}/ui/${stylesheet}`, { "accept-encoding": "gzip" });
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.deepEqual(gunzipSync(gz.body), (await raw(`${s.url}/ui/${stylesheet}`)).body);
    const refused = await raw(`${s.url}/ui/${script}`, { "accept-encoding": "br;q=0, gzip;q=0" });
    assert.equal(refused.headers["content-encoding"], undefined);
  });

  it("sends the build's precompressed files, and ignores a sibling that does not match", async () => {
    const br = await raw(`${s.url}/ui/${script}`, { "accept-encoding": "br" });
    assert.deepEqual(br.body, readFileSync(join(dir, `${script}.br`)));
    const gz = await raw(`${s.url}/ui/${stylesheet}`, { "accept-encoding": "gzip" });
    assert.deepEqual(gz.body, readFileSync(join(dir, `${stylesheet}.gz`)));
    const text = "x".repeat(4096);
    writeFileSync(join(dir, "extra.txt"), text);
    writeFileSync(join(dir, "extra.txt.br"), "not brotli of extra.txt");
    const extra = await raw(`${s.url}/ui/extra.txt`, { "accept-encoding": "br" });
    assert.equal(extra.headers["content-encoding"], "br");
    assert.equal(brotliDecompressSync(extra.body).toString(), text);
  });

  it("serves no source map and no precompressed file by its own name", async () => {
    assert.ok(readdirSync(dir).includes(`${script}.map`), "the build keeps the map on disk");
    assert.equal((await raw(`${s.url}/ui/${script}.map`)).status, 404);
    assert.equal((await raw(`${s.url}/ui/${script}.br`)).status, 404);
    assert.equal((await raw(`${s.url}/ui/..%2Fconsole.db`)).status, 404);
  });

  it("serves the source map when the option turns it on", async () => {
    const withMaps = await serve({ ui: { dir, sourceMaps: true } });
    try {
      const map = await raw(`${withMaps.url}/ui/${script}.map`);
      assert.equal(map.status, 200);
      assert.equal(JSON.parse(map.body.toString()).version, 3);
    } finally {
      await withMaps.close();
    }
  });
});

describe("Accept-Encoding", () => {
  const file = {
    body: Buffer.alloc(0),
    br: Buffer.alloc(0),
    gzip: Buffer.alloc(0),
    type: "",
    etag: "",
    cacheControl: "",
  };
  it("prefers brotli, honours q=0, and takes * as either", () => {
    assert.equal(pickEncoding(file, "gzip, br"), "br");
    assert.equal(pickEncoding(file, "gzip"), "gzip");
    assert.equal(pickEncoding(file, "br;q=0, gzip;q=0.5"), "gzip");
    assert.equal(pickEncoding(file, "identity"), undefined);
    assert.equal(pickEncoding(file, "*"), "br");
    assert.equal(pickEncoding(file, undefined), undefined);
    assert.equal(pickEncoding({ ...file, br: undefined }, "br, gzip"), "gzip");
  });
});
