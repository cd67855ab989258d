// Type declarations for liblock's Node.js binding. Every duration is an
// integer number of milliseconds.
//
// They need no @types/node (an optional peer dependency, not installed with
// the package): Symbol.asyncDispose and AsyncDisposable come from TypeScript's
// own lib esnext.disposable (TypeScript >= 5.2; @types/node references the
// same lib), and AbortSignal is the project's own — Node's from @types/node,
// or the DOM's — read through `typeof globalThis`, with the few members
// liblock uses when the project declares none. They type-check with
// `tsc --strict` and without skipLibCheck with and without @types/node and
// the DOM lib (scripts/test-dist.sh).
/// <reference lib="esnext.disposable" />

/** The part of an AbortSignal liblock uses, for projects that declare none (no @types/node, no DOM lib). */
export interface MinimalAbortSignal {
  readonly aborted: boolean;
  readonly reason: any;
  addEventListener(type: 'abort', listener: (event: any) => void, options?: boolean | { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: (event: any) => void, options?: boolean | {}): void;
}
/**
 * The project's AbortSignal (Node's, declared by @types/node, or the DOM's);
 * MinimalAbortSignal when it declares none.
 */
export type LockAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : MinimalAbortSignal;

// The option objects: generated from the spec (core/hostabi/spec/protocol.json).
export * from './lib/options.gen';
import type { AcquireOptions, Backend, CampaignOptions, ClientOptions, InspectOptions, LeaderOptions, LockMode, ObserveOptions } from './lib/options.gen';

/** One node's answer in an Inspection. */
export interface NodeState {
  /** The node's 0-based index in ClientOptions.nodes. */
  node: number;
  /** host:port or the socket path. */
  addr: string;
  /** The key exists on this node. */
  locked: boolean;
  /** Its value there is the quorum holder's. */
  holder: boolean;
  /** The owner label in this node's value ('' when none). */
  owner: string;
  /** The key's remaining ttl there in ms; null when it has no key or no expiry; 0 when the node failed. */
  ttl: number | null;
  /** Why the node failed; null when it answered. */
  error: string | null;
}

/** What Client#inspect saw. */
export interface Inspection {
  /** One value holds the key on a quorum. */
  held: boolean;
  /**
   * How long it certainly stays held, in ms (the quorum-th longest remaining
   * ttl, less the round's duration and the drift allowance); null when the key
   * has no expiry (someone must delete it); 0 when not held.
   */
  validity: number | null;
  /** The holder's owner label; '' when not held, when it set none, or when another program set the key. */
  owner: string;
  /** Every node, in configuration order. */
  nodes: NodeState[];
  /** A semaphore's inspection (`permits` given): its permit count. */
  permits?: number;
  /** A semaphore's inspection: how many permits a quorum holds. */
  inUse?: number;
  /** A semaphore's inspection: the held permits, by slot. */
  holders?: PermitHolder[];
  /**
   * A read-write lock's inspection (`mode` given): every reader that holds
   * it on a quorum, with its owner label and validity ([] when none).
   */
  readers?: Reader[];
  /** An election's leader's term (an election's inspection only). */
  term?: number;
  /** An election's leader's value (an election's inspection only). */
  value?: string;
}

/** One held permit of a semaphore (Inspection.holders). */
export interface PermitHolder {
  /** The permit's slot, 0..permits-1. */
  slot: number;
  /** Its holder's owner label ('' for none). */
  owner: string;
  /** How long it certainly stays held, in ms; null without expiry. */
  validity: number | null;
}

/** One reader of a read-write lock (Inspection.readers). */
export interface Reader {
  /** Its owner label ('' for none). */
  owner: string;
  /** How long it certainly stays held on a quorum, in ms; null without expiry. */
  validity: number | null;
}

/** An election's leader, from Client#leader. */
export interface Leader {
  name: string;
  value: string;
  /** Strictly greater than every earlier leader's term. */
  term: number;
  /** The leader's client owner label ('' when none). */
  owner: string;
  /** How long it certainly keeps leading unless it resigns, in ms. */
  validity: number | null;
}

/** One item of Client#observe: the leader, or `leader: null` when there is none. */
export interface LeaderChange {
  name: string;
  /** The leader (as Client#leader gives it), or null: no leader now. */
  leader: Leader | null;
  /** The leader's fields again (absent when there is none); read them from `leader`. */
  value?: string;
  term?: number;
  owner?: string;
  validity?: number | null;
}

/** This client's leadership of an election, from Client#campaign. */
export class Leadership {
  private constructor();
  readonly name: string;
  readonly value: string;
  /** The term: the fencing token, strictly greater than every earlier leader's. */
  readonly term: number;
  /** How long this client certainly still leads, in ms (0 once lost or resigned). */
  readonly validity: number;
  readonly lost: boolean;
  /** Aborted, with a LockLostError as its reason, when the leadership is lost. */
  readonly signal: LockAbortSignal;
  /** The lock behind the leadership. */
  readonly lock: Lock;
  /** Resigns: observers learn it at once. Rejects with LockLostError when it was no longer held. */
  resign(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export type ErrorCode =
  | 'NOT_ACQUIRED'
  | 'UNAVAILABLE'
  | 'LOST'
  | 'CANCELED'
  | 'INVALID_ARGUMENT'
  | 'INVALID_HANDLE'
  | 'INTERNAL'
  | 'LOAD_FAILED'
  | 'CLOSED';

/** Base class of every error thrown by liblock. */
export class LockError extends Error {
  readonly code: ErrorCode;
  /** The C ABI status code (1..7; LoadError: 7, as no library call was made). */
  readonly status: number;
}
/** Another owner holds the resource: no quorum of grants before the wait ran out. */
export class NotAcquiredError extends LockError { readonly code: 'NOT_ACQUIRED'; }
/** Too many nodes failed (errors, timeouts, refused connections) for a quorum. */
export class UnavailableError extends LockError {
  readonly code: 'UNAVAILABLE';
  /**
   * Every node that failed (neither granted nor refused), in configuration
   * order: its 0-based index in ClientOptions.nodes, host:port (or the socket
   * path), and why (e.g. "connect ECONNREFUSED 127.0.0.1:7001", a timeout);
   * for extend and release also every node that had not answered when the
   * outcome was certain ("no answer yet when the outcome was certain"). The
   * message counts them: "all 3 nodes failed, quorum is 2", or "F of N nodes
   * failed, quorum is Q".
   */
  readonly nodes?: { node: number; addr: string; cause: string }[];
}
/** The lock is no longer held on a quorum. */
export class LockLostError extends LockError { readonly code: 'LOST'; }
/** The pending operation was canceled (its AbortSignal, or close()). `cause` is the signal's reason. */
export class CanceledError extends LockError { readonly code: 'CANCELED'; }
/** A bad argument: a wrong type (checked in JS) or a value out of range (checked by the library). */
export class InvalidArgumentError extends LockError { readonly code: 'INVALID_ARGUMENT'; }
/** The library no longer knows the handle (a lock or engine it freed). */
export class InvalidHandleError extends LockError { readonly code: 'INVALID_HANDLE'; }
/**
 * A call on a client after its close(), or on a lock of that client: acquire,
 * using, inspect, extend, release. The message starts with
 * "liblock: the client is closed". `status` 4, LOCK_INVALID_HANDLE's.
 */
export class ClientClosedError extends LockError { readonly code: 'CLOSED'; }
/** A bug inside liblock; the message says what. */
export class InternalError extends LockError { readonly code: 'INTERNAL'; }
/**
 * The backend's library could not be loaded: for the native backend koffi
 * (an optional dependency) or liblock.so (missing, not loadable on this
 * platform, wrong ABI); for the wasm backend liblock.wasm. The message says
 * what is missing; where the native backend cannot load, backend: 'wasm' can.
 */
export class LoadError extends LockError { readonly code: 'LOAD_FAILED'; }

export class Lock implements AsyncDisposable {
  private constructor();
  /** The resource given to acquire (a list's first). */
  readonly resource: string;
  /** The resources the lock holds: the list given to acquire, or [resource]. */
  readonly resources: string[];
  /** keyPrefix + resource (wrapped in a hash tag, `{…}`, on a client with a Redis Cluster node). */
  readonly key: string;
  /** The token stored as the key's value: acquire's `token`, or `[owner/]<random uuid>`. */
  readonly token: string;
  /** The fencing token (acquire's `fence: true`), strictly increasing per resource; 0 when not asked for. */
  readonly fence: number;
  /** 'exclusive' (the mutex), or 'read' / 'write' (acquire's `mode`). */
  readonly mode: LockMode;
  /** Whether this acquire re-entered a lock its `token` already held on a quorum. */
  readonly reentered: boolean;
  readonly autoExtend: boolean;
  /**
   * Whether the lock was released: its release() completed, or its client's
   * close() released it (then `lost` stays false).
   */
  readonly released: boolean;
  /** Whether the library knows the lock is no longer held. */
  readonly lost: boolean;
  /** Remaining validity in ms (0 once expired, released or lost). */
  readonly validity: number;
  /** Aborted, with a LockLostError as its reason, when the lock is lost. */
  readonly signal: LockAbortSignal;
  /**
   * Resets the expiry to ttl ms from now; LockLostError if it already expired; ClientClosedError after
   * the client's close().
   */
  extend(ttl: number): Promise<void>;
  /**
   * Deletes the key where this token holds it; LockLostError if it was no
   * longer held; ClientClosedError after the client's close() (which released it).
   */
  release(): Promise<void>;
  /** Releases, ignoring LockLostError; does nothing once the client is closed. */
  [Symbol.asyncDispose](): Promise<void>;
}

export class Client {
  constructor(options: ClientOptions);
  readonly closed: boolean;
  /** The node timeout in ms (as configured, or the default 50). */
  readonly nodeTimeout: number;
  /** The owner label of ClientOptions ('' when none). */
  readonly owner: string;
  /** The engine running this client's locks: 'native' (liblock.so) or 'wasm' (liblock.wasm). */
  readonly backend: Backend;
  /**
   * Takes the lock on `resource`, or — given a list — on all of its
   * resources together or none (a multi-resource lock: 1..MAX_RESOURCES
   * distinct names, each keeping its own key, so it excludes a lock on any
   * member and every other list sharing one, in any order; its release,
   * extend, signal and autoExtend cover the whole list; `fence` gives one
   * fence above every earlier fence on each member; not with `token`).
   * Errors name a list's element: `resources[2]`.
   */
  acquire(resource: string | readonly string[], options: AcquireOptions): Promise<Lock>;
  /**
   * Looks at the resource without taking it. Rejects with UnavailableError
   * (per-node causes in `nodes`) when too many nodes failed to tell.
   */
  inspect(resource: string, options?: InspectOptions): Promise<Inspection>;
  /**
   * Campaigns in the election `name` until this client leads; resolves with
   * its Leadership (term, validity, signal, resign()). Errors name the
   * parameter (name, value, ttl, wait, signal, options).
   */
  campaign(name: string, options: CampaignOptions): Promise<Leadership>;
  /** The election's leader, or null when none is valid on a quorum. */
  leader(name: string, options?: LeaderOptions): Promise<Leader | null>;
  /**
   * Every leader change of the election, in order, the current state first;
   * ends when the signal aborts, the loop breaks, or the client closes.
   */
  observe(name: string, options?: ObserveOptions): AsyncIterableIterator<LeaderChange>;
  /**
   * Runs fn while holding the lock (auto-extended unless autoExtend: false),
   * then releases it. Rejects with fn's error, or with LockLostError if the
   * lock was lost while fn ran.
   */
  using<T>(resource: string | readonly string[], options: AcquireOptions, fn: (signal: LockAbortSignal, lock: Lock) => Promise<T> | T): Promise<T>;
  /**
   * Cancels pending operations (CanceledError), releases held locks (they
   * read `released`), closes connections. Never rejects. Every later call on
   * the client or its locks rejects with ClientClosedError. Without it, locks
   * still held when the process ends normally ('beforeExit') are released
   * then; after process.exit() or a signal they stay until their ttl.
   */
  close(): Promise<void>;
}

export const ABI_VERSION: 1;
/** acquire()'s and using()'s default wait, in ms: 10000. */
export const DEFAULT_WAIT: 10000;
/** The most resources one acquire() of a list takes: 16 (the spec's limit). */
export const MAX_RESOURCES: 16;

export interface LibraryInfo {
  backend: 'native';
  path: string;
  from: 'LIBLOCK_PATH' | 'repository build' | 'packaged copy';
  abiVersion: number;
  version: string | null;
}
export interface WasmLibraryInfo {
  backend: 'wasm';
  path: string;
  from: 'LIBLOCK_WASM_PATH' | 'repository build' | 'packaged copy';
  abiVersion: number;
  version: null;
  /** Bytes of liblock.wasm. */
  size: number;
  /** new WebAssembly.Module (eager: every function compiled), in this process (ms). */
  compileMs: number;
  /** Instantiating it on the main thread, _initialize included (ms). */
  instantiateMs: number;
}
/**
 * With no argument: the library a client naming no backend runs (loads it if
 * needed): liblock.so where it loads, else liblock.wasm; `fallbackReason` is
 * why liblock.so was passed over (null when it was not).
 */
export function library(): (LibraryInfo | WasmLibraryInfo) & { fallbackReason: string | null };
/** Loads liblock.so if needed and tells which file was loaded. */
export function library(backend: 'native'): LibraryInfo;
/** Loads and compiles liblock.wasm if needed and tells which file, and what loading cost. */
export function library(backend: 'wasm'): WasmLibraryInfo;

/** The module itself (`import liblock from 'liblock'`, also compiled to CommonJS without esModuleInterop). */
declare const _default: typeof import('./index');
export default _default;
