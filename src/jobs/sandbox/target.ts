import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CborSerializer } from "../cbor.js";
import { QueueError } from "../errors.js";
import { JsonSerializer, type Serializer } from "../serializer.js";
import type { SerializerRef } from "./protocol.js";

/**
 * A task whose handler runs in a sandbox process: `queue.task(name, { file }, options)`.
 *
 * ```ts
 * queue.task("resize", { file: "./handlers/resize.mjs" }, { timeoutMs: 30_000 });
 * ```
 */
export interface SandboxedHandler {
  /**
   * The module that exports the handler: a path relative to the current working directory (at
   * registration), an absolute path, or a `file:` URL (a string or a `URL`, such as
   * `new URL("./handlers/resize.js", import.meta.url)`). It is loaded by node in the sandbox
   * process with the worker's own node flags, so it must be JavaScript, or TypeScript when the
   * worker runs under a loader such as tsx.
   */
  file: string | URL;
  /** The export that is the handler. Default `"default"` (`export default async function …`). */
  export?: string;
  /**
   * Only with a serializer other than `JsonSerializer` or `CborSerializer`: a module (path or URL, as
   * `file`) whose default export is that serializer (an object, or a class built with no argument),
   * so the sandbox decodes arguments and encodes results exactly as the queue does.
   */
  serializer?: string | URL;
}

/** Where a sandboxed task's handler is, resolved at registration. */
export interface SandboxTarget {
  href: string;
  exportName: string;
  serializer: SerializerRef;
}

/** True when `queue.task` was given a sandboxed handler rather than a function. */
export function isSandboxedHandler(value: unknown): value is SandboxedHandler {
  return typeof value === "object" && value !== null && "file" in value;
}

/** The file's URL: a `file:` URL as it is, else a path resolved against the working directory. */
function moduleUrl(taskName: string, what: string, value: unknown): URL {
  let url: URL;
  if (value instanceof URL) url = value;
  else if (typeof value === "string" && value.length > 0) {
    url = value.startsWith("file:") ? new URL(value) : pathToFileURL(resolve(process.cwd(), value));
  } else {
    throw new QueueError(`task "${taskName}": the sandbox ${what} must be a path or a file: URL`);
  }
  if (url.protocol !== "file:")
    throw new QueueError(`task "${taskName}": the sandbox ${what} must be a file: URL, not ${url.protocol}`);
  if (!existsSync(fileURLToPath(url)))
    throw new QueueError(`task "${taskName}": no sandbox ${what} at ${fileURLToPath(url)}`);
  return url;
}

/** Checks a sandboxed handler's description and resolves its file and serializer. */
export function sandboxTarget(
  taskName: string,
  spec: SandboxedHandler,
  serializer: Serializer,
): SandboxTarget {
  const href = moduleUrl(taskName, "file", spec.file).href;
  const exportName = spec.export ?? "default";
  if (typeof exportName !== "string" || exportName.length === 0)
    throw new QueueError(`task "${taskName}": the sandbox export must be a non-empty string`);
  let ref: SerializerRef;
  if (spec.serializer !== undefined) {
    ref = { kind: "module", href: moduleUrl(taskName, "serializer", spec.serializer).href };
  } else if (serializer.constructor === JsonSerializer) {
    ref = { kind: "json" };
  } else if (serializer.constructor === CborSerializer) {
    ref = { kind: "cbor" };
  } else {
    throw new QueueError(
      `task "${taskName}": the queue's serializer is a custom one; name its module in the sandbox's \`serializer\``,
    );
  }
  return { href, exportName, serializer: ref };
}
