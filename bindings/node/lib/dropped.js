'use strict';
// Dropped locks: index.js releases a Lock garbage-collected unreleased,
// through a FinalizationRegistry. Registering every Lock and unregistering
// it at its release costs a V8 runtime call each (0.3 to 0.8 µs a pair), for
// the common lock released within milliseconds: instead a new Lock is held
// strongly for at most DELAY_MS, and registered only if still unreleased
// then. Nothing is lost: a listed Lock cannot be collected, so one dropped
// meanwhile is registered like any other, and released after a later collection.

/** How long a new lock waits (ms) before it is registered, if still unreleased. */
const DELAY_MS = 20;

/**
 * A tracker over `registry` (a FinalizationRegistry whose held value and
 * unregister token are the lock's state `st`):
 *   track(lock, st)  a new Lock: registered DELAY_MS later unless released by then
 *   forget(st)       st's lock was released: unregistered if it was registered
 * st.registered (a boolean the host's lock state starts false) says which.
 */
function tracker(registry) {
  const young = []; // lock, st, lock, st, ...: the locks not yet registered
  const flush = () => {
    for (let i = 0; i < young.length; i += 2) {
      const st = young[i + 1];
      if (st.released) continue;
      registry.register(young[i], st, st);
      st.registered = true;
    }
    young.length = 0;
  };
  return {
    track(lock, st) {
      // The first of a batch arms the one timer (unref'd: it never keeps the process alive).
      if (young.push(lock, st) === 2) setTimeout(flush, DELAY_MS).unref();
    },
    forget(st) {
      if (!st.registered) return;
      st.registered = false;
      registry.unregister(st);
    },
  };
}

module.exports = { tracker, DELAY_MS };
