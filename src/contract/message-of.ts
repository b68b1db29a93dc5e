/** The message of anything thrown: an Error's `message`, or the value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
