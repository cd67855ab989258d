// ESM entry point: the same objects as the CommonJS one.
import liblock from './index.js';

export const {
  Client,
  Lock,
  Leadership,
  LockError,
  NotAcquiredError,
  UnavailableError,
  LockLostError,
  CanceledError,
  InvalidArgumentError,
  InvalidHandleError,
  InternalError,
  LoadError,
  ClientClosedError,
  ABI_VERSION,
  DEFAULT_WAIT,
  MAX_RESOURCES,
  library,
} = liblock;
export default liblock;
