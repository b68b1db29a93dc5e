import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Broker } from "../contract/broker.js";

/** One MCP tool: its name, what an agent reads about it, its arguments, and what it does. */
export interface McpTool<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /** Returns the JSON the agent gets back; throws the broker's named errors. */
  run(broker: Broker, args: z.output<z.ZodObject<S>>, signal: AbortSignal): Promise<unknown>;
}

/** Declares a tool with its argument types inferred from the schema. */
export function tool<S extends z.ZodRawShape>(t: McpTool<S>): McpTool {
  return t as unknown as McpTool;
}

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITES: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
export const DESTRUCTIVE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  openWorldHint: false,
};
