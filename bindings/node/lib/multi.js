'use strict';

// Multi-resource locks: client.acquire(['a', 'b'], opts)
// takes all of the resources together or none. The engine does the work
// (one script per node over the set's keys); this checks what it can only
// see here — the list's type, each element's JavaScript string (no NUL, no
// lone surrogate) — and its length and duplicates before anything is
// encoded; the engine checks them again, naming an element by its index in
// the list as these do: resources[2].

const E = require('./errors');
const { LIMITS } = require('./protocol.gen');

const MAX_RESOURCES = LIMITS.resources.max;

/**
 * resourceList checks a list given as acquire's resource and returns it
 * split as the host protocol wants: the first resource and the others.
 * stringArg and bytesArg are index.js's checks (passed in: no cycle).
 */
function resourceList(list, stringArg, bytesArg, minBytes, maxBytes) {
  if (list.length === 0) {
    throw new E.InvalidArgumentError('liblock: invalid argument: resources: must name at least one resource');
  }
  if (list.length > MAX_RESOURCES) {
    throw new E.InvalidArgumentError(`liblock: invalid argument: resources: at most ${MAX_RESOURCES} resources in one lock, got ${list.length}`);
  }
  const seen = new Map();
  for (let i = 0; i < list.length; i++) {
    const name = `resources[${i}]`;
    bytesArg(name, stringArg(name, list[i]), minBytes, maxBytes);
    if (seen.has(list[i])) {
      throw new E.InvalidArgumentError(`liblock: invalid argument: ${name}: duplicates resources[${seen.get(list[i])}] (${JSON.stringify(list[i])})`);
    }
    seen.set(list[i], i);
  }
  return { first: list[0], more: list.slice(1) };
}

module.exports = { resourceList, MAX_RESOURCES };
