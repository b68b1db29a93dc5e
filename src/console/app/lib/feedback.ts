import { createStore } from "./store.js";

export interface Toast {
  id: number;
  kind: "ok" | "error" | "info";
  text: string;
}

export const toasts = createStore<Toast[]>([]);
let nextId = 1;

/** Shows a short message in the live region (errors stay until dismissed or replaced). */
export function notify(text: string, kind: Toast["kind"] = "ok"): void {
  const id = nextId++;
  toasts.update((list) => [...list.slice(-3), { id, kind, text }]);
  setTimeout(() => dismiss(id), kind === "error" ? 10_000 : 4000);
}

export function dismiss(id: number): void {
  toasts.update((list) => list.filter((t) => t.id !== id));
}

/** Runs an action, reporting its failure as an error toast. Returns whether it succeeded. */
export async function attempt(action: () => Promise<unknown>, done?: string): Promise<boolean> {
  try {
    await action();
    if (done) notify(done);
    return true;
  } catch (err) {
    notify((err as Error).message, "error");
    return false;
  }
}

export interface ConfirmRequest {
  title: string;
  message: string;
  confirm: string;
  danger?: boolean;
  resolve(ok: boolean): void;
}

export const confirmation = createStore<ConfirmRequest | undefined>(undefined);

/** Asks before a destructive or bulk action; resolves true when confirmed. */
export function confirmAction(request: Omit<ConfirmRequest, "resolve">): Promise<boolean> {
  return new Promise((resolve) => {
    confirmation.get()?.resolve(false);
    confirmation.set({
      ...request,
      resolve: (ok) => {
        confirmation.set(undefined);
        resolve(ok);
      },
    });
  });
}
