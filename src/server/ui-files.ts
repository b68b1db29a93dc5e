import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync, constants as zlib } from "node:zlib";

/** One file of the console, as read from disk, with its compressed forms. */
export interface UiFile {
  body: Buffer;
  /** Brotli and gzip forms, when the type compresses and they are smaller. */
  br?: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".map", ".json", ".svg", ".txt"]);
/** Below this a compressed answer saves less than its headers cost. */
const MIN_COMPRESS_BYTES = 1024;

/** A name the build gave a content hash (`app-3F2A9BXK.js`): it never changes, so it is cached for a year. */
const HASHED = /-[A-Za-z0-9]{8,}\.[a-z0-9]+$/;
export const IMMUTABLE = "public, max-age=31536000, immutable";
/** Everything else (index.html first) is revalidated on every use, so a new build shows at once. */
export const REVALIDATE = "no-cache";

/** A safe relative path under the console's directory: plain segments, no dot-segments, no backslash. */
const SAFE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * The build's `a.js.br` (or `.gz`) when it holds exactly `a.js`: checked by decompressing once per
 * version, so a stale or half-copied sibling is never sent (it is compressed afresh instead).
 */
function precompressed(path: string, body: Buffer, decompress: (b: Buffer) => Buffer): Buffer | undefined {
  try {
    const packed = readFileSync(path);
    return decompress(packed).equals(body) ? packed : undefined;
  } catch {
    return undefined;
  }
}

function load(path: string): UiFile {
  const body = readFileSync(path);
  const ext = extname(path);
  const file: UiFile = {
    body,
    type: TYPES[ext] ?? "application/octet-stream",
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    cacheControl: HASHED.test(path) ? IMMUTABLE : REVALIDATE,
  };
  if (COMPRESSIBLE.has(ext) && body.length >= MIN_COMPRESS_BYTES) {
    const br =
      precompressed(`${path}.br`, body, brotliDecompressSync) ??
      brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } });
    const gzip = precompressed(`${path}.gz`, body, gunzipSync) ?? gzipSync(body, { level: 9 });
    if (br.length < body.length) file.br = br;
    if (gzip.length < body.length) file.gzip = gzip;
  }
  return file;
}

/**
 * The console's files, read and compressed once per version on disk (the build precompresses;
 * other files are compressed on first use). A stat per request notices a rebuild.
 */
export class UiFiles {
  private readonly cache = new Map<string, { mtimeMs: number; size: number; file: UiFile }>();

  constructor(private readonly dir: string) {}

  /** The file at `rel` (`""` is index.html), or undefined when there is none or the path is unsafe. */
  get(rel: string): UiFile | undefined {
    const name = rel === "" ? "index.html" : rel;
    if (!SAFE_PATH.test(name) || name.endsWith(".br") || name.endsWith(".gz")) return undefined;
    const path = join(this.dir, name);
    let mtimeMs: number;
    let size: number;
    try {
      const st = statSync(path);
      if (!st.isFile()) return undefined;
      mtimeMs = st.mtimeMs;
      size = st.size;
    } catch {
      return undefined;
    }
    const cached = this.cache.get(name);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.file;
    const file = load(path);
    this.cache.set(name, { mtimeMs, size, file });
    return file;
  }
}

/** The encoding to answer with: brotli, then gzip, when the client accepts it (q > 0). */
export function pickEncoding(file: UiFile, acceptEncoding: string | undefined): "br" | "gzip" | undefined {
  if (!acceptEncoding || (!file.br && !file.gzip)) return undefined;
  const accepted = new Set<string>();
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [coding, ...params] = part.trim().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (coding && (!q || Number(q.slice(2)) > 0)) accepted.add(coding.trim());
  }
  if (file.br && (accepted.has("br") || accepted.has("*"))) return "br";
  if (file.gzip && (accepted.has("gzip") || accepted.has("*"))) return "gzip";
  return undefined;
}
