'use strict';
// The platform packages of the native addon, named the way napi-rs names them: the package
// `indexa-indexeddb-<platform>` holds `indexa.<platform>.node`, where <platform> is
// `<os>-<cpu>[-<abi>]` (`linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`).
// `scripts/pack.sh` builds the one of the running platform; `lib/native.js` loads it.

const packagePrefix = 'indexa-indexeddb-';

// glibc or musl on Linux: Node's diagnostic report names the glibc it runs on, and has no such
// field under musl.
function linuxLibc() {
  const header = process.report && typeof process.report.getReport === 'function'
    ? process.report.getReport().header
    : {};
  return header.glibcVersionRuntime ? 'gnu' : 'musl';
}

/**
 * The running platform's name, e.g. `linux-x64-gnu`: `process.platform`, `process.arch`, and
 * on Linux the C library (`gnu` or `musl`), on Windows the ABI (`msvc`).
 * @returns {string}
 */
function currentPlatform() {
  const { platform, arch } = process;
  if (platform === 'linux') return `${platform}-${arch}-${linuxLibc()}`;
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/**
 * The fields npm matches a platform package against (`os`, `cpu`, and `libc` on Linux), for a
 * platform name as `currentPlatform()` returns it.
 * @param {string} name
 * @returns {{os: string[], cpu: string[], libc?: string[]}}
 */
function npmFields(name) {
  const [os, cpu, abi] = name.split('-');
  const fields = { os: [os], cpu: [cpu] };
  if (os === 'linux') fields.libc = [abi === 'musl' ? 'musl' : 'glibc'];
  return fields;
}

module.exports = {
  packagePrefix,
  currentPlatform,
  npmFields,
  packageName: (name) => packagePrefix + name,
  addonFile: (name) => `indexa.${name}.node`,
};
