import { z } from "zod";
import {
  MAX_BATCH_ITEMS,
  MAX_JSON_DEPTH,
  MAX_NAME_LIST,
  MAX_OBJECT_KEYS,
  MAX_RENEW_BATCH,
  MAX_REQUEST_BYTES,
  MAX_REQUEST_ENTRIES,
} from "../contract/limits.js";
import { FilterJSON, WireSubscriptionInfo } from "./admin-service.js";
import { ErrorBody } from "./errors.js";
import { ClaimGateJSON, WireMessageRecord, WorkerInfoJSON, WorkerRecordJSON } from "./job-service.js";
import { WireMessage } from "./message.js";
import { WireQueueConfig, WireQueueInfo } from "./queue-config.js";
import { CompleteItemJSON, LockRefJSON } from "./queue-service.js";
import { ROUTES, type RpcRoute, rpcName, rpcPath } from "./routes.js";

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

function idOf(schema: z.ZodType): string {
  const id = schema.meta()?.id;
  if (!id) throw new Error("every wire schema has an id");
  return id;
}

/** The JSON Schemas of every named wire schema, generated from the zod schemas themselves. */
function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  const add = (s: z.ZodType) => {
    const id = idOf(s);
    if (!registry.has(s)) registry.add(s, { id });
  };
  // Shared parts first, so that they are referenced rather than inlined.
  for (const s of [
    ErrorBody,
    WireMessage,
    WireQueueConfig,
    WireQueueInfo,
    WireSubscriptionInfo,
    LockRefJSON,
    FilterJSON,
    CompleteItemJSON,
    ClaimGateJSON,
    WireMessageRecord,
    WorkerInfoJSON,
    WorkerRecordJSON,
  ])
    add(s);
  for (const route of Object.values(ROUTES) as RpcRoute[]) {
    if (route.request) add(route.request);
    add(route.response);
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: "openapi-3.0",
    io: "input",
    uri: (id) => `#/components/schemas/${id}`,
  });
  for (const s of Object.values(schemas) as Record<string, unknown>[]) delete s.$id;
  return schemas;
}

function operation(route: RpcRoute) {
  const errorResponse = { description: "Error", content: { "application/json": { schema: ref("Error") } } };
  return {
    post: {
      operationId: `${route.service}.${route.method}`,
      summary: route.summary,
      tags: [route.service],
      ...(route.extension && { "x-mqlite-extension": true }),
      requestBody: route.request
        ? { required: true, content: { "application/json": { schema: ref(idOf(route.request)) } } }
        : { required: false, description: "Ignored.", content: { "application/json": { schema: {} } } },
      responses: {
        "200": {
          description: "OK",
          content: { "application/json": { schema: ref(idOf(route.response)) } },
        },
        default: errorResponse,
      },
    },
  };
}

let cached: string | undefined;

/**
 * The OpenAPI 3.0 document of the RPC routes, built from the same zod schemas that validate requests
 * on the server and type them in the client.
 */
export function openApiDocument(version: string): object {
  const paths: Record<string, unknown> = {};
  for (const route of Object.values(ROUTES) as RpcRoute[]) paths[rpcPath(route)] = operation(route);
  return {
    openapi: "3.0.3",
    info: {
      title: "mqlite",
      version,
      description:
        "A message broker whose whole state is one SQLite file. Every RPC is POST /mqlite.v1.<Service>/<Method> " +
        "with a JSON body; errors are {code, message}. Bytes are standard base64; times are epoch milliseconds. " +
        `Request caps, checked before the body is parsed (400 invalid_argument naming the cap): a body of ${MAX_REQUEST_BYTES} bytes (413), ` +
        `${MAX_JSON_DEPTH} levels of nesting, ${MAX_BATCH_ITEMS} items per list (each list's own maxItems may be lower), ` +
        `${MAX_OBJECT_KEYS} keys per object, ${MAX_REQUEST_ENTRIES} list items and object keys in all (x-mqlite-limits). ` +
        "A body of 256 KiB or more waits for room in the server's large-body budget before it is read; one that " +
        "waited in vain is 429 resource_exhausted with Retry-After.",
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: componentSchemas(),
    },
    paths,
    "x-mqlite-rpcs": (Object.values(ROUTES) as RpcRoute[]).map(rpcName),
    "x-mqlite-limits": {
      maxRequestBytes: MAX_REQUEST_BYTES,
      maxJsonDepth: MAX_JSON_DEPTH,
      maxListItems: MAX_BATCH_ITEMS,
      maxRenewBatch: MAX_RENEW_BATCH,
      maxNameList: MAX_NAME_LIST,
      maxObjectKeys: MAX_OBJECT_KEYS,
      maxRequestEntries: MAX_REQUEST_ENTRIES,
    },
  };
}

/** `openApiDocument` serialised once per process (it depends only on the version). */
export function openApiJson(version: string): string {
  cached ??= `${JSON.stringify(openApiDocument(version))}\n`;
  return cached;
}
