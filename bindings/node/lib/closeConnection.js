'use strict';
// "Close a database connection" (IndexedDB 3.0): the close pending flag is set
// at once; the connection closes when its last transaction has finished.

const { internal } = require('./internal.js');

/** Sets the close pending flag of `db`; it closes once no transaction of it is left. */
function closeConnection(db) {
  const di = db[internal];
  if (di.closePending) return;
  di.closePending = true;
  maybeClosed(db);
}

/** Closes `db` if its close is pending and no transaction of it is left. */
function maybeClosed(db) {
  const di = db[internal];
  if (!di.closePending || di.isClosed || di.txs.size > 0) return;
  di.isClosed = true;
  di.entry.connections.delete(db);
  di.conn.native.close();
  di.resolveClosed();
}

module.exports = { closeConnection, maybeClosed };
