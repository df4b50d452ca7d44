// A typed sample as a user writes it against the installed package: the package's own exports
// and factory options, idb and Dexie over it, and browser IndexedDB code using the globals of
// "indexa-indexeddb/auto". test/package.test.js type-checks it with `tsc --noEmit`, with and
// without "dom" in tsconfig's "lib".
import {
  indexedDB, IDBKeyRange, IDBFactory, type IndexaFactoryOptions, type IDBRecord, type IDBGetAllOptions,
} from 'indexa-indexeddb';
import 'indexa-indexeddb/auto';
import { openDB, type DBSchema } from 'idb';
import Dexie, { type EntityTable } from 'dexie';

interface NotesDB extends DBSchema {
  notes: { key: number; value: { id: number; text: string }; indexes: { byText: string } };
}
interface Friend { id: number; name: string }

const options: IndexaFactoryOptions = { dir: 'data' };
const onDisk: IDBFactory = new IDBFactory(options);
const inMemory = new IDBFactory({ memory: true });
const range: IDBKeyRange = IDBKeyRange.bound(1, 10, false, true);

export async function withIdb(): Promise<string | undefined> {
  const db = await openDB<NotesDB>('notes', 1, {
    upgrade(d) {
      d.createObjectStore('notes', { keyPath: 'id' }).createIndex('byText', 'text');
    },
  });
  await db.put('notes', { id: 1, text: 'hello' });
  return (await db.getFromIndex('notes', 'byText', 'hello'))?.text;
}

export async function withDexie(): Promise<number> {
  const db = new Dexie('friends', { indexedDB, IDBKeyRange }) as Dexie & { friends: EntityTable<Friend, 'id'> };
  db.version(1).stores({ friends: '++id, name' });
  return db.friends.where('name').startsWith('A').count();
}

// Browser IndexedDB code, unchanged: the globals come from "indexa-indexeddb/auto".
export function plain(): void {
  const request = globalThis.indexedDB.open('plain', 1);
  request.onupgradeneeded = () => {
    request.result.createObjectStore('s', { autoIncrement: true });
  };
  request.onsuccess = (event: Event) => {
    const db = (event.target as IDBOpenDBRequest).result;
    const tx: IDBTransaction = db.transaction('s', 'readwrite', { durability: 'strict' });
    const put: IDBRequest<IDBValidKey> = tx.objectStore('s').put({ a: 1 });
    put.onsuccess = () => console.log(put.result, range.includes(2), onDisk.cmp(1, 2), inMemory);
    // IndexedDB 3.0's reads.
    const all: IDBGetAllOptions = { query: range, count: 5, direction: 'prevunique' };
    const records: IDBRequest<IDBRecord[]> = tx.objectStore('s').getAllRecords(all);
    records.onsuccess = () => console.log(records.result.map((r) => [r.key, r.primaryKey, r.value]));
    const keys: IDBRequest<IDBValidKey[]> = tx.objectStore('s').getAllKeys({ direction: 'prev' });
    console.log(keys);
  };
}
