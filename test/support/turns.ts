/**
 * Counts the turns of the event loop from now until `stop()`: a ticker that reschedules itself with
 * `setImmediate`, so it runs once per turn, and only when nothing holds the loop. `now()` reads the
 * count so far.
 */
export function countTurns(): { now(): number; stop(): number } {
  let turns = 0;
  let stopped = false;
  const tick = () => {
    turns++;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => turns,
    stop: () => {
      stopped = true;
      return turns;
    },
  };
}
