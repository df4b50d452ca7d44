// Types of indexa-indexeddb. The IndexedDB interfaces are TypeScript's own `lib.dom` ones, so
// code written for the browser's IndexedDB (and idb, Dexie) type-checks unchanged; the
// reference below brings `lib.dom` in whether or not the project's tsconfig lists "dom".
/// <reference lib="dom" />

/** Where an `IDBFactory` keeps its databases (README.md, "Where data lives"). */
export interface IndexaFactoryOptions {
  /**
   * The directory of the databases, one SQLite file per database; created if missing.
   * Default: `$INDEXA_DATA_DIR` when set, else the in-memory mode.
   */
  dir?: string;
  /**
   * An existing PostgreSQL database instead of a directory,
   * `postgres://user[:password]@host[:port]/dbname` (`?sslmode=require` for TLS); every
   * process and host using the URL shares its databases, with versionchange and blocked
   * events between them. Takes precedence over `dir`.
   */
  url?: string;
  /**
   * Milliseconds a deleteDatabase or an upgrade waits for the other processes' connections
   * to close before failing with InvalidStateError. Default: 30000.
   */
  lockTimeout?: number;
  /**
   * The in-memory mode: a private temporary directory, removed when the process exits.
   * Takes precedence over `dir`.
   */
  memory?: boolean;
}

/** The `IDBFactory` constructor, which takes where the databases live. */
export interface IndexaIDBFactoryConstructor {
  prototype: globalThis.IDBFactory;
  new (options?: IndexaFactoryOptions): globalThis.IDBFactory;
}

/**
 * The default factory: its databases live in `$INDEXA_DATA_DIR` when set, else in a private
 * temporary directory removed at exit. `require` and `import` give the same object.
 */
export declare const indexedDB: globalThis.IDBFactory;

export declare const IDBFactory: IndexaIDBFactoryConstructor;
export type IDBFactory = globalThis.IDBFactory;
export declare const IDBDatabase: typeof globalThis.IDBDatabase;
export type IDBDatabase = globalThis.IDBDatabase;
export declare const IDBTransaction: typeof globalThis.IDBTransaction;
export type IDBTransaction = globalThis.IDBTransaction;
export declare const IDBObjectStore: typeof globalThis.IDBObjectStore;
export type IDBObjectStore = globalThis.IDBObjectStore;
export declare const IDBIndex: typeof globalThis.IDBIndex;
export type IDBIndex = globalThis.IDBIndex;
export declare const IDBCursor: typeof globalThis.IDBCursor;
export type IDBCursor = globalThis.IDBCursor;
export declare const IDBCursorWithValue: typeof globalThis.IDBCursorWithValue;
export type IDBCursorWithValue = globalThis.IDBCursorWithValue;
export declare const IDBRequest: typeof globalThis.IDBRequest;
export type IDBRequest<T = any> = globalThis.IDBRequest<T>;
export declare const IDBOpenDBRequest: typeof globalThis.IDBOpenDBRequest;
export type IDBOpenDBRequest = globalThis.IDBOpenDBRequest;
export declare const IDBVersionChangeEvent: typeof globalThis.IDBVersionChangeEvent;
export type IDBVersionChangeEvent = globalThis.IDBVersionChangeEvent;
export declare const IDBKeyRange: typeof globalThis.IDBKeyRange;
export type IDBKeyRange = globalThis.IDBKeyRange;
export declare const DOMStringList: typeof globalThis.DOMStringList;
export type DOMStringList = globalThis.DOMStringList;

/** IndexedDB 3.0's IDBGetAllOptions, taken by getAll(), getAllKeys() and getAllRecords(). */
export interface IDBGetAllOptions {
  /** A key or key range; absent or null: every record. */
  query?: IDBValidKey | IDBKeyRange | null;
  /** At most this many results; absent or 0: all. */
  count?: number;
  /** Default "next"; the unique directions keep one record per index key. */
  direction?: IDBCursorDirection;
}

/** IndexedDB 3.0's IDBRecord: one result of getAllRecords(). */
export interface IDBRecord<T = any> {
  /** The index key (on an object store, the record's key). */
  readonly key: IDBValidKey;
  readonly primaryKey: IDBValidKey;
  readonly value: T;
}
export declare const IDBRecord: { prototype: IDBRecord };

// IndexedDB 3.0's reads that TypeScript's lib.dom does not have yet.
declare global {
  interface IDBObjectStore {
    getAll(options?: IDBGetAllOptions): IDBRequest<any[]>;
    getAllKeys(options?: IDBGetAllOptions): IDBRequest<IDBValidKey[]>;
    getAllRecords(options?: IDBGetAllOptions): IDBRequest<IDBRecord[]>;
  }
  interface IDBIndex {
    getAll(options?: IDBGetAllOptions): IDBRequest<any[]>;
    getAllKeys(options?: IDBGetAllOptions): IDBRequest<IDBValidKey[]>;
    getAllRecords(options?: IDBGetAllOptions): IDBRequest<IDBRecord[]>;
  }
}
