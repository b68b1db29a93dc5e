import { useEffect, useState } from "preact/hooks";

/** The page's location: `#/queues/orders?state=active` → path ["queues", "orders"], query {state}. */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const [pathPart = "", queryPart = ""] = raw.split("?", 2);
  const path = pathPart
    .split("/")
    .filter((s) => s !== "")
    .map((s) => decodeURIComponent(s));
  return { path, query: new URLSearchParams(queryPart) };
}

/** A hash link: `href("queues", name)` → `#/queues/<name>`. */
export function href(...parts: (string | number)[]): string {
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join("/")}`;
}

export function navigate(to: string): void {
  if (location.hash !== to) location.hash = to;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
