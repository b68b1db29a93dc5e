import { BlockList, isIP } from "node:net";

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

/** Loopback as the original defines it: 127.0.0.0/8, ::1 or `localhost`; an empty host is not. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true;
  const family = isIP(host);
  return family !== 0 && loopback.check(host, family === 6 ? "ipv6" : "ipv4");
}
