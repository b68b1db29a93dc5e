import { BlockList, isIP } from "node:net";

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** Loopback as the original defines it: 127.0.0.0/8, ::1 or `localhost`; an empty host is not. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const family = isIP(host);
  // `isIP` takes dotted decimal only (no octal or short forms), so 127.0.0.0/8 is the prefix "127.":
  // every request's Host is checked, and `BlockList.check` builds a SocketAddress per call.
  if (family === 4) return host.startsWith("127.");
  return family === 6 && loopback.check(host, "ipv6");
}
