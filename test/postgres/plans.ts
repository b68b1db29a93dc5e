// Reading PostgreSQL plans in tests: which scans a statement makes of `messages`, and the
// statements a broker sends, caught with their values so they can be explained as sent.
import pg from "pg";

export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** The indexes a bitmap scan's children read. */
function bitmapIndexes(node: PlanNode): string[] {
  return (node.Plans ?? []).flatMap((c) =>
    c["Node Type"] === "Bitmap Index Scan" ? [c["Index Name"] ?? ""] : bitmapIndexes(c),
  );
}

/** How the plan reads `messages`: each scan as `<node type> <index>`. */
export function messageScans(node: PlanNode, out: string[] = []): string[] {
  if (
    node["Relation Name"] === "messages" &&
    !/^(Update|Delete|Insert|ModifyTable)$/.test(node["Node Type"])
  ) {
    const index =
      node["Node Type"] === "Bitmap Heap Scan" ? bitmapIndexes(node).join(" ") : (node["Index Name"] ?? "");
    out.push(`${node["Node Type"]} ${index}`.trim());
  }
  for (const child of node.Plans ?? []) messageScans(child, out);
  return out;
}

/** Records the statements sent through `pg` whose text contains `marker`, with their values. */
export function captureStatements(marker: string) {
  const seen: { text: string; values: unknown[] }[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as { text?: string; values?: unknown[] } | string;
    if (typeof config === "object" && config.text?.includes(marker))
      seen.push({ text: config.text, values: config.values ?? [] });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return { seen, restore: () => (pg.Client.prototype.query = query) };
}

/** The scans of `messages` in the plan of `text` with `values`, as `admin` explains it. */
export async function explainScans(admin: pg.Client, text: string, values: unknown[]): Promise<string[]> {
  const { rows } = await admin.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${text}`,
    values,
  );
  return messageScans(rows[0]!["QUERY PLAN"][0].Plan);
}
