// META: title=harness self-test: assert_throws_dom
'use strict';
// Every subtest here is wrong and must fail, except the last, which checks that a right one passes.

test(() => {
  assert_throws_dom('NotFoundError', () => { throw new DOMException('wrong name', 'DataError'); });
}, 'a DOMException of another name');

test(() => {
  assert_throws_dom('DataError', () => {
    const e = new Error('looks like one');
    e.name = 'DataError';
    e.code = 0;
    throw e;
  });
}, 'an Error named like a DOMException');

test(() => {
  class DOMException extends Error {
    constructor(message, name) { super(message); this.name = name; this.code = 0; }
  }
  assert_throws_dom('DataError', () => { throw new DOMException('other class', 'DataError'); });
}, 'an instance of another class called DOMException');

test(() => {
  assert_throws_dom('DataError', () => {});
}, 'nothing thrown');

test(() => {
  assert_throws_js(TypeError, () => { throw new DOMException('not a TypeError', 'DataError'); });
}, 'assert_throws_js given a DOMException');

test(() => {
  assert_throws_dom('DataError', () => indexedDB.cmp(NaN, 0));
}, 'control: the right DOMException passes');
