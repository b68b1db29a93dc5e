/**
 * The filter language: a TypeScript implementation of the expr language (expr-lang/expr v1.17.8),
 * with a static checker, a closure compiler, and the broker's message environment.
 *
 * This module depends on nothing else in `src/`.
 */
export { FilterCompileError, FilterRuntimeError, type SourcePosition } from "./errors.js";
export {
  compileMessageFilter,
  type FilterMessage,
  MESSAGE_ENV_TYPES,
  MESSAGE_FUNCTIONS,
  type MessageFilter,
  type MessageFilterOptions,
  messageEnv,
} from "./message-env.js";
export {
  type CompileOptions,
  compile,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NODES,
  DEFAULT_MAX_SOURCE_BYTES,
  type ExpectKind,
  type FilterFunction,
  inferEnvTypes,
  type Program,
} from "./program.js";
export {
  AnyKeyMap,
  Duration,
  GoFloat,
  GoMonth,
  GoWeekday,
  type Int,
  type PlainMap,
  stringMap,
  type Value,
} from "./runtime/values.js";
export { GoTime } from "./time/go-time.js";
export { Location } from "./time/zones.js";
export type { FilterType } from "./types.js";
