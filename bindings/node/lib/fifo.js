'use strict';
// A first-in, first-out queue whose `shift` takes constant time however long the queue is.
// `Array.prototype.shift` moves every element left once an array is large (V8 cannot trim
// the front of an array kept in its large-object space, past about 16,000 elements), so a
// transaction with 20,000 requests in flight spent most of its time there.

class Fifo {
  constructor() {
    this.items = [];
    this.head = 0;
  }

  /** How many items are queued. */
  get length() {
    return this.items.length - this.head;
  }

  /** The oldest item, left in the queue; `undefined` when it is empty. */
  peek() {
    return this.items[this.head];
  }

  push(item) {
    this.items.push(item);
  }

  /** Takes the oldest item out; `undefined` when the queue is empty. */
  shift() {
    const items = this.items;
    if (this.head === items.length) return undefined;
    const item = items[this.head];
    items[this.head++] = undefined;
    if (this.head === items.length) {
      items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= items.length) {
      // Drop the taken slots once they are at least half the array: each item is moved at
      // most once per time the queue doubles, so shifting stays constant time on average.
      this.items = items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

module.exports = { Fifo };
