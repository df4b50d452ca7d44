'use strict';
// Every JavaScript example of seed 000 (key generators) and seed 003 (keys and indexes),
// written as the seeds show them, inside upgradeneeded or transactions of this package.
const test = require('node:test');
const assert = require('node:assert/strict');
const { IDBKeyRange } = require('..');
const { freshFactory, done, open, finished } = require('./helpers.js');

/** Runs `body(db, transaction)` in an upgrade; resolves with the connection after it. */
function upgrade(body) {
  const { factory } = freshFactory();
  return open(factory, 'seed', 1, (db, transaction) => body(db, transaction));
}

test('seed 000: each object store gets its own key generator', async () => {
  const keys = {};
  const db = await upgrade((db) => {
    let store1, store2;
    store1 = db.createObjectStore("store1", { autoIncrement: true });
    store1.put("a").onsuccess = (e) => { keys.a1 = e.target.result; }; // Will get key 1
    store2 = db.createObjectStore("store2", { autoIncrement: true });
    store2.put("a").onsuccess = (e) => { keys.a2 = e.target.result; }; // Will get key 1
    store1.put("b").onsuccess = (e) => { keys.b1 = e.target.result; }; // Will get key 2
    store2.put("b").onsuccess = (e) => { keys.b2 = e.target.result; }; // Will get key 2
  });
  assert.deepEqual(keys, { a1: 1, a2: 1, b1: 2, b2: 2 });
  db.close();
});

test('seed 000: a failed insertion does not update the key generator (preventDefault)', async () => {
  const results = [];
  const db = await upgrade((db, transaction) => {
    let store, index;
    transaction.onerror = function(e) { e.preventDefault() };
    store = db.createObjectStore("store1", { autoIncrement: true });
    index = store.createIndex("index1", "ix", { unique: true });
    const r1 = store.put({ ix: "a"}); // Will get key 1
    const r2 = store.put({ ix: "a"}); // Will fail
    const r3 = store.put({ ix: "b"}); // Will get key 2
    r1.onsuccess = () => results.push(['r1', r1.result]);
    r2.onerror = () => results.push(['r2', r2.error.name]);
    r3.onsuccess = () => results.push(['r3', r3.result]);
  });
  assert.deepEqual(results, [['r1', 1], ['r2', 'ConstraintError'], ['r3', 2]]);
  const tx = db.transaction('store1');
  assert.deepEqual(await done(tx.objectStore('store1').getAllKeys()), [1, 2]);
  db.close();
});

test('seed 000: delete and clear never affect the key generator', async () => {
  const keys = [];
  const db = await upgrade((db) => {
    let store;
    store = db.createObjectStore("store1", { autoIncrement: true });
    store.put("a").onsuccess = (e) => keys.push(e.target.result); // Will get key 1
    store.delete(1);
    store.put("b").onsuccess = (e) => keys.push(e.target.result); // Will get key 2
    store.clear();
    store.put("c").onsuccess = (e) => keys.push(e.target.result); // Will get key 3
    store.delete(IDBKeyRange.lowerBound(0));
    store.put("d").onsuccess = (e) => keys.push(e.target.result); // Will get key 4
  });
  assert.deepEqual(keys, [1, 2, 3, 4]);
  db.close();
});

test('seed 000: explicit keys move the generator only when numeric and higher', async () => {
  const keys = [];
  const db = await upgrade((db) => {
    let store;
    const put = (...args) => { store.put(...args).onsuccess = (e) => keys.push(e.target.result); };
    store = db.createObjectStore("store1", { autoIncrement: true });
    put("a"); // Will get key 1
    put("b", 3); // Will use key 3
    put("c"); // Will get key 4
    put("d", -10); // Will use key -10
    put("e"); // Will get key 5
    put("f", 6.00001); // Will use key 6.0001
    put("g"); // Will get key 7
    put("f", 8.9999); // Will use key 8.9999
    put("g"); // Will get key 9
    put("h", "foo"); // Will use key "foo"
    put("i"); // Will get key 10
    put("j", [1000]); // Will use key [1000]
    put("k"); // Will get key 11
  });
  assert.deepEqual(keys, [1, 3, 4, -10, 5, 6.00001, 7, 8.9999, 9, 'foo', 10, [1000], 11]);
  db.close();
});

test('seed 000: explicit in-line keys behave the same', async () => {
  const keys = [];
  const db = await upgrade((db) => {
    const store = db.createObjectStore('store1', { keyPath: 'id', autoIncrement: true });
    const put = (v, id) => {
      store.put(id === undefined ? { v } : { v, id }).onsuccess = (e) => keys.push(e.target.result);
    };
    put('a'); put('b', 3); put('c'); put('d', -10); put('e'); put('f', 6.00001); put('g');
    put('f', 8.9999); put('g'); put('h', 'foo'); put('i'); put('j', [1000]); put('k');
  });
  assert.deepEqual(keys, [1, 3, 4, -10, 5, 6.00001, 7, 8.9999, 9, 'foo', 10, [1000], 11]);
  db.close();
});

test('seed 000: aborting a transaction rolls back the key generator (trans1.abort())', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'seed', 1, (db) => {
    db.createObjectStore("store", { autoIncrement: true });
  });
  const keys = [];
  let trans1, store_t1, trans2, store_t2;
  trans1 = db.transaction(["store"], "readwrite");
  store_t1 = trans1.objectStore("store");
  store_t1.put("a"); // Will get key 1
  store_t1.put("b"); // Will get key 2
  trans1.abort();
  trans2 = db.transaction(["store"], "readwrite");
  store_t2 = trans2.objectStore("store");
  store_t2.put("c").onsuccess = (e) => keys.push(e.target.result); // Will get key 1
  store_t2.put("d").onsuccess = (e) => keys.push(e.target.result); // Will get key 2
  await assert.rejects(finished(trans1), (e) => e === null || e.name === 'AbortError');
  await finished(trans2);
  assert.deepEqual(keys, [1, 2]);
  db.close();
});

test('seed 000: a generated key fills a missing key path property (foo.bar)', async () => {
  let key;
  const db = await upgrade((db) => {
    var store = db.createObjectStore("store", { keyPath: "foo.bar",
                                                autoIncrement: true });
    store.put({ foo: {} }).onsuccess = function(e) {
      key = e.target.result;
      console.assert(key === 1);
    };
  });
  assert.equal(key, 1);
  db.close();
});

test('seed 000: a present key path value is the key (foo.bar = 10)', async () => {
  let key;
  const db = await upgrade((db) => {
    var store = db.createObjectStore("store", { keyPath: "foo.bar",
                                                autoIncrement: true });
    store.put({ foo: { bar: 10 } }).onsuccess = function(e) {
      key = e.target.result;
      console.assert(key === 10);
    };
  });
  assert.equal(key, 10);
  db.close();
});

test('seed 000: properties along the key path are created (foo.bar.baz)', async () => {
  let stored;
  const db = await upgrade((db) => {
    var store = db.createObjectStore("store", { keyPath: "foo.bar.baz",
                                                autoIncrement: true });
    store.put({ zip: {} }).onsuccess = function(e) {
      var key = e.target.result;
      console.assert(key === 1);
      store.get(key).onsuccess = function(e) {
        var value = e.target.result;
        // value will be: { zip: {}, foo: { bar: { baz: 1 } } }
        console.assert(value.foo.bar.baz === 1);
        stored = value;
      };
    };
  });
  assert.deepEqual(stored, { zip: {}, foo: { bar: { baz: 1 } } });
  db.close();
});

test('seed 000: a key cannot be injected into a primitive or an array (DataError)', async () => {
  const thrown = [];
  const db = await upgrade((db) => {
    var store = db.createObjectStore("store", { keyPath: "foo", autoIncrement: true });
    // The key generation will attempt to create and store the key path
    // property on this primitive.
    try { store.put(4); } catch (e) { thrown.push(e.name); } // will throw DataError
    // The key generation will attempt to create and store the key path
    // property on this array.
    try { store.put([10]); } catch (e) { thrown.push(e.name); } // will throw DataError
  });
  assert.deepEqual(thrown, ['DataError', 'DataError']);
  db.close();
});

test('seed 003: in-line and out-of-line keys', async () => {
  const unBlob = new Uint8Array([1, 2, 3]);
  const db = await upgrade((db) => {
    // Clave en linea: el motor lee la propiedad isbn del objeto
    const libros = db.createObjectStore("libros", { keyPath: "isbn" });
    libros.put({ isbn: "978-84", titulo: "Rayuela" });

    // Clave fuera de linea: el valor no sabe cual es su clave
    const miniaturas = db.createObjectStore("miniaturas");
    miniaturas.put(unBlob, "portada-978-84");
  });
  const tx = db.transaction(['libros', 'miniaturas']);
  assert.deepEqual(await done(tx.objectStore('libros').get('978-84')), { isbn: '978-84', titulo: 'Rayuela' });
  const thumb = await done(tx.objectStore('miniaturas').get('portada-978-84'));
  assert.ok(thumb instanceof Uint8Array);
  assert.deepEqual([...thumb], [1, 2, 3]);
  db.close();
});

test('seed 003: the generator leaves permanent gaps and jumps over explicit keys', async () => {
  const keys = [];
  const db = await upgrade((db) => {
    const eventos = db.createObjectStore("eventos", {
      keyPath: "id",
      autoIncrement: true,
    });
    const track = (r) => { r.onsuccess = () => keys.push(r.result); };

    track(eventos.put({ texto: "uno" }));   // id 1, escrito dentro del objeto
    track(eventos.put({ texto: "dos" }));   // id 2
    eventos.delete(2);                // el contador no retrocede
    track(eventos.put({ texto: "tres" }));  // id 3, el hueco 2 no se reutiliza
    track(eventos.put({ id: 900, texto: "manual" }));
    track(eventos.put({ texto: "cuatro" })); // id 901, el contador salto
  });
  assert.deepEqual(keys, [1, 2, 3, 900, 901]);
  const all = await done(db.transaction('eventos').objectStore('eventos').getAll());
  assert.deepEqual(all, [
    { texto: 'uno', id: 1 }, { texto: 'tres', id: 3 }, { id: 900, texto: 'manual' }, { texto: 'cuatro', id: 901 },
  ]);
  db.close();
});

test('seed 003: unique, compound and multiEntry indexes, key ranges and index reads', async () => {
  const db = await upgrade((db) => {
    const notas = db.createObjectStore("notas", { keyPath: "id" });

    // Indice simple
    notas.createIndex("por_fecha", "creado");

    // Indice unico: rechaza duplicados en escritura
    notas.createIndex("por_uuid", "uuid", { unique: true });

    // Indice compuesto: orden lexicografico por componentes
    notas.createIndex("por_libreta_fecha", ["libreta", "creado"]);

    // Indice multivalor: una entrada por cada elemento del array
    notas.createIndex("por_etiqueta", "etiquetas", { multiEntry: true });
  });
  const notes = [
    { id: 1, creado: 10, uuid: 'u1', libreta: 'trabajo', etiquetas: ['local-first', 'idb'], nombre: 'mar' },
    { id: 2, creado: 20, uuid: 'u2', libreta: 'casa', etiquetas: ['idb'], nombre: 'marea' },
    { id: 3, creado: 30, uuid: 'u3', libreta: 'trabajo', etiquetas: ['local-first'], nombre: 'martes' },
    { id: 4, creado: 40, uuid: 'u4', libreta: 'trabajo', etiquetas: [], nombre: 'mas' },
  ];
  const w = db.transaction('notas', 'readwrite');
  for (const n of notes) w.objectStore('notas').put(n);
  // unique: a duplicate aborts the transaction with ConstraintError unless prevented.
  const dup = w.objectStore('notas').put({ id: 5, uuid: 'u1' });
  dup.onerror = (e) => e.preventDefault();
  await finished(w);
  assert.equal(dup.error.name, 'ConstraintError');

  const fechaInicio = 20, fechaFin = 40, desde = 10, hasta = 30;
  const ranges = [
    IDBKeyRange.only(7),                       // igualdad exacta
    IDBKeyRange.lowerBound(fechaInicio),       // desde ahi hacia arriba
    IDBKeyRange.upperBound(fechaFin, true),    // hasta ahi, sin incluirlo
    IDBKeyRange.bound(desde, hasta, false, true), // intervalo semiabierto
  ];
  // Prefijo de cadena: un punto de codigo altisimo como techo
  const porNombre = IDBKeyRange.bound("mar", "mar\uffff");
  // Prefijo de clave compuesta: un array vacio ordena despues de toda cadena
  const deLaLibreta = IDBKeyRange.bound(["trabajo"], ["trabajo", []]);

  const tx = db.transaction('notas');
  const store = tx.objectStore('notas');
  const fecha = store.index('por_fecha');
  const counts = await Promise.all(ranges.map((r) => done(fecha.getAllKeys(r))));
  assert.deepEqual(counts, [[], [2, 3, 4], [1, 2, 3], [1, 2]]);
  assert.deepEqual(
    (await done(store.getAll())).filter((n) => porNombre.includes(n.nombre)).map((n) => n.id),
    [1, 2, 3],
  );
  assert.deepEqual(await done(store.index('por_libreta_fecha').getAllKeys(deLaLibreta)), [1, 3, 4]);
  assert.deepEqual(await done(store.index('por_etiqueta').getAllKeys('local-first')), [1, 3]);

  const rango = IDBKeyRange.bound(10, 40);
  const idx = tx.objectStore("notas").index("por_fecha");
  const first = idx.get(rango);              // solo el primero, no una lista
  const twenty = idx.getAll(rango, 20);       // los veinte primeros del rango
  const keys = idx.getAllKeys(rango, 20);   // sus claves primarias, sin deserializar valores
  const count = idx.count(rango);            // cuenta en el indice, sin leer registros
  const results = await Promise.all([first, twenty, keys, count].map(done));
  assert.equal(results[0].id, 1);
  assert.deepEqual(results[1].map((n) => n.id), [1, 2, 3, 4]);
  assert.deepEqual(results[2], [1, 2, 3, 4]);
  assert.equal(results[3], 4);
  assert.deepEqual(await done(idx.getAllKeys(rango, 2)), [1, 2]);
  db.close();
});

test('seed 003: a unique index over existing duplicates fails the whole migration', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'm', 1, (db) => {
    const s = db.createObjectStore('notas', { keyPath: 'id' });
    s.put({ id: 1, uuid: 'x' });
    s.put({ id: 2, uuid: 'x' });
  });
  db.close();
  const request = factory.open('m', 2);
  request.onupgradeneeded = () => {
    request.transaction.objectStore('notas').createIndex('por_uuid', 'uuid', { unique: true });
  };
  await assert.rejects(done(request), { name: 'AbortError' });
  const again = await open(factory, 'm');
  assert.equal(again.version, 1);
  assert.deepEqual([...again.transaction('notas').objectStore('notas').indexNames], []);
  again.close();
});
