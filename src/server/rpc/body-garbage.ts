import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How many bytes of a large body arrive between two collections of their chunks. */
export const COLLECT_EVERY_BYTES = 4 * 2 ** 20;
/** How many bytes of large bodies are answered between two collections of what they left behind. */
export const COLLECT_AFTER_BODY_BYTES = 4 * 2 ** 20;

type Collect = (options: { type: "minor" | "major"; execution?: "async" }) => void;

let collect: Collect | undefined;
/** Bytes of large bodies answered since the last collection they started. */
let answeredSince = 0;

/**
 * V8's collector: the process's own `gc` when node runs with `--expose-gc`, else one taken from a
 * fresh context with the flag set for that moment only (no later context sees a `gc` global).
 */
function collector(): Collect {
  if (!collect) {
    let found = (globalThis as { gc?: unknown }).gc;
    if (typeof found !== "function") {
      setFlagsFromString("--expose-gc");
      try {
        found = runInNewContext("gc");
      } finally {
        setFlagsFromString("--no-expose-gc");
      }
    }
    // A runtime that gave none (not V8's flags) leaves the collections to the collector's own timing.
    collect = typeof found === "function" ? (found as Collect) : () => {};
  }
  return collect;
}

/**
 * Collects the young generation while a large body arrives (a scavenge: ~0.3 ms). Node hands a body
 * over in 64 KiB chunks, each a buffer of its own, garbage once copied into the request's buffer;
 * little else is allocated meanwhile, so nothing collected them: a 32 MiB body left 32 MB of them
 * behind, freed only once the decode and write that follow had filled the young generation, at
 * their peak. Called every `COLLECT_EVERY_BYTES`, it frees them as they come.
 */
export function collectArrivedChunks(): void {
  collector()({ type: "minor" });
}

/**
 * Counts a large body whose request was answered; every `COLLECT_AFTER_BODY_BYTES` of them starts a
 * collection of the whole heap, incremental (its marking runs beside the event loop, which pauses
 * for a few milliseconds at most). A large request's items live through its write, long enough to
 * be moved to the old generation, where they stay once answered until V8 next collects it: that
 * waited for the heap to grow, and back-to-back large requests each added theirs (100-120 MB over
 * the server's baseline through the stall bench's maximal requests; 40 MB with this).
 */
export function noteAnsweredBody(bytes: number): void {
  answeredSince += bytes;
  if (answeredSince < COLLECT_AFTER_BODY_BYTES) return;
  answeredSince = 0;
  collector()({ type: "major", execution: "async" });
}
