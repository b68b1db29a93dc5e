/**
 * The console's Content-Security-Policy: scripts only from the console's own files (no inline
 * script, no eval); styles from its stylesheet plus inline ones (charts colour elements one by
 * one); calls to this broker or another one the operator signs in to (the sign-in form takes a
 * broker URL); never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self' http: https:",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Sent with every answer under `/ui` (files, redirects, misses). */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Security-Policy": CONSOLE_CSP,
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
});
