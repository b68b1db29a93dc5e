import type { Message } from "../contract/types.js";
import { messageToWire } from "../wire/message.js";
import { bodyForAgent } from "./body.js";

/** A message under its wire names, with the body as text when it is UTF-8 (see `bodyForAgent`). */
export function messageForAgent(m: Message) {
  const { body: _base64, ...wire } = messageToWire(m);
  return { ...wire, ...bodyForAgent(m.body) };
}

export function messagesForAgent(messages: Message[]) {
  return { messages: messages.map(messageForAgent) };
}
