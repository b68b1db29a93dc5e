import { CliError } from "../errors.js";

/** A listen address split into host (possibly empty: every interface) and port. */
export interface ListenAddr {
  host: string;
  port: number;
}

/** Parses `host:port`, `:port` or `[v6]:port`. A blank value is an error, as in the original. */
export function parseAddr(text: string, source: string): ListenAddr {
  const value = text.trim();
  if (value === "") throw new CliError(`${source} is blank; give an address such as 127.0.0.1:6754`);
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535)
    throw new CliError(`${source} "${text}" is not host:port (for example 127.0.0.1:6754)`);
  return { host: m[1] ?? m[2] ?? "", port };
}

export { isLoopback } from "../../server/loopback.js";
