import type { Message } from "../../contract/types.js";
import { messageToWire } from "../../wire/message.js";
import { bodyCell } from "./body.js";
import { instant } from "./format.js";
import { table } from "./table.js";

export interface MessageTableOptions {
  /** Show lock tokens and lock deadlines (messages the caller now holds). */
  locks?: boolean;
  /** Show each message's state (peek). */
  state?: boolean;
  /** Cut bodies to this many characters (peek); absent prints them whole. */
  preview?: number;
}

interface Column {
  title: string;
  cell: (m: Message) => string;
  /** Shown even when every cell is empty. */
  always?: boolean;
  right?: boolean;
}

/** Messages as an aligned table; optional columns appear only when some message has a value. */
export function messagesTable(messages: Message[], options: MessageTableOptions = {}): string {
  const columns: Column[] = [
    { title: "SEQ", cell: (m) => String(m.seqNumber), always: true, right: true },
    ...(options.state ? [{ title: "STATE", cell: (m: Message) => m.state ?? "", always: true }] : []),
    { title: "DELIVERIES", cell: (m) => String(m.deliveryCount), always: true, right: true },
    ...(options.locks
      ? [
          { title: "LOCK_TOKEN", cell: (m: Message) => m.lockToken ?? "" },
          { title: "LOCKED_UNTIL", cell: (m: Message) => instant(m.lockedUntil) },
        ]
      : []),
    { title: "ENQUEUED_AT", cell: (m) => instant(m.enqueuedAt), always: true },
    ...(options.state ? [{ title: "VISIBLE_AT", cell: (m: Message) => scheduledAt(m) }] : []),
    { title: "MESSAGE_ID", cell: (m) => m.messageId ?? "" },
    { title: "GROUP", cell: (m) => m.groupId ?? "" },
    { title: "SUBJECT", cell: (m) => m.subject ?? "" },
    { title: "PROPERTIES", cell: (m) => (m.properties ? props(m.properties) : "") },
    { title: "REASON", cell: (m) => m.deadLetterReason ?? "" },
    { title: "BODY", cell: (m) => bodyCell(m.body, options.preview), always: true },
  ];
  const shown = columns.filter((c) => c.always || messages.some((m) => c.cell(m) !== ""));
  const right = new Set(shown.flatMap((c, i) => (c.right ? [i] : [])));
  return table(
    shown.map((c) => c.title),
    messages.map((m) => shown.map((c) => c.cell(m))),
    right,
  );
}

/** Only a delivery time that differs from the enqueue time says something (scheduled, backoff). */
function scheduledAt(m: Message): string {
  return m.visibleAt && m.visibleAt !== m.enqueuedAt ? instant(m.visibleAt) : "";
}

function props(p: Record<string, string>): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** Messages under their wire names (bodies in base64), as Receive and Peek answer them. */
export function messagesJson(messages: Message[]) {
  return messages.map(messageToWire);
}
