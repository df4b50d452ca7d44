'use strict';
// DOMStringList (HTML's interface, which IndexedDB uses for objectStoreNames and indexNames):
// here an Array subclass with `contains()` and `item()`, its names in code-unit order.

class DOMStringList extends Array {
  static get [Symbol.species]() { return Array; }
  contains(s) { return this.includes(String(s)); }
  item(i) { return i >= 0 && i < this.length ? this[i] : null; }
}

function stringList(names) {
  const list = new DOMStringList();
  for (const n of [...names].sort(compareStrings)) list.push(n);
  return list;
}

function compareStrings(a, b) {
  // Code-unit order, as the spec sorts names.
  return a < b ? -1 : a > b ? 1 : 0;
}

module.exports = { DOMStringList, stringList, compareStrings };
