// The console runs in a browser: its files are type-checked with the DOM library.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
