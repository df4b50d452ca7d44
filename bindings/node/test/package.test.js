'use strict';
// The package as a user installs it: scripts/pack.sh writes the tarballs, which install in an
// empty folder with no Rust toolchain on PATH and no registry (npm --offline, a registry
// address that answers nothing, an empty cache); then a CommonJS script, an ES module script
// (scripts/smoke/) and `tsc --noEmit` on a typed sample (test/install/sample.ts, with idb and
// Dexie) succeed there.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const platform = require('../lib/platform.js');

const pkgDir = path.join(__dirname, '..');
const { version } = require('../package.json');
const platformPackage = platform.packageName(platform.currentPlatform());

/** The first file called `name` on PATH, with symbolic links resolved. */
function which(name) {
  for (const dir of process.env.PATH.split(path.delimiter)) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return fs.realpathSync(file);
  }
  throw new Error(`${name} is not on PATH`);
}

/**
 * An environment with no cargo or rustc: PATH is a directory holding only node and npm, then
 * the directories of PATH that hold neither cargo nor rustc; no npm_* settings of a parent npm.
 */
function toolchainFreeEnv(root) {
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  fs.symlinkSync(which('npm'), path.join(bin, 'npm'));
  const rest = process.env.PATH.split(path.delimiter)
    .filter((dir) => !['cargo', 'rustc'].some((tool) => fs.existsSync(path.join(dir, tool))));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, PATH: [bin, ...rest].join(path.delimiter) };
}

function run(cwd, env, command, args) {
  const out = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  assert.equal(out.status, 0, `${command} ${args.join(' ')}\n${out.stdout}\n${out.stderr}`);
  return out.stdout;
}

test('platform names follow napi-rs and carry npm\'s os/cpu/libc fields', () => {
  assert.match(platform.currentPlatform(), /^[a-z0-9]+-[a-z0-9]+(-(gnu|musl|msvc))?$/);
  assert.deepEqual(platform.npmFields('linux-x64-gnu'), { os: ['linux'], cpu: ['x64'], libc: ['glibc'] });
  assert.deepEqual(platform.npmFields('linux-arm64-musl'), { os: ['linux'], cpu: ['arm64'], libc: ['musl'] });
  assert.deepEqual(platform.npmFields('darwin-arm64'), { os: ['darwin'], cpu: ['arm64'] });
  assert.equal(platform.packageName('darwin-arm64'), 'indexa-indexeddb-darwin-arm64');
  assert.equal(platform.addonFile('win32-x64-msvc'), 'indexa.win32-x64-msvc.node');
});

test('the tarballs of pack.sh install and work with no Rust toolchain and no network', { timeout: 15 * 60 * 1000 }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-node-package-'));
  try {
    const dist = path.join(root, 'dist');
    execFileSync('bash', [path.join(pkgDir, 'scripts', 'pack.sh'), dist], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tarballs = fs.readdirSync(dist).sort();
    assert.deepEqual(tarballs, [`indexa-indexeddb-${version}.tgz`, `${platformPackage}-${version}.tgz`]);

    // Every tarball carries both licence texts; the platform package's version is the main one's.
    for (const tarball of tarballs) {
      const files = execFileSync('tar', ['tzf', path.join(dist, tarball)], { encoding: 'utf8' }).split('\n');
      assert.ok(files.includes('package/LICENSE-MIT') && files.includes('package/LICENSE-APACHE'), tarball);
      assert.ok(!files.includes('package/indexa.node'), `${tarball} holds a development build`);
    }
    const manifest = (tarball) => JSON.parse(execFileSync('tar', ['xzOf', path.join(dist, tarball), 'package/package.json'], { encoding: 'utf8' }));
    const platformManifest = manifest(`${platformPackage}-${version}.tgz`);
    assert.equal(platformManifest.version, version);
    assert.deepEqual(
      { os: platformManifest.os, cpu: platformManifest.cpu, libc: platformManifest.libc },
      { libc: undefined, ...platform.npmFields(platform.currentPlatform()) },
    );
    assert.deepEqual(manifest(`indexa-indexeddb-${version}.tgz`).optionalDependencies, { [platformPackage]: version });
    // Both name the repository Cargo.toml names.
    const repository = { type: 'git', url: 'git+https://github.com/indexa-db/indexa.git', directory: 'bindings/node' };
    assert.deepEqual(manifest(`indexa-indexeddb-${version}.tgz`).repository, repository);
    assert.deepEqual(platformManifest.repository, repository);

    const app = path.join(root, 'app');
    fs.mkdirSync(app);
    const env = toolchainFreeEnv(root);
    assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT');
    assert.equal(spawnSync('rustc', ['--version'], { env }).error?.code, 'ENOENT');
    fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true }\n');
    run(app, env, 'npm', [
      'install', '--offline', '--registry=http://127.0.0.1:9/', `--cache=${path.join(root, 'npm-cache')}`,
      '--no-audit', '--no-fund', ...tarballs.map((t) => path.join(dist, t)),
    ]);
    assert.deepEqual(fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.')).sort(),
      ['indexa-indexeddb', platformPackage]);

    // scripts/smoke/: the same record through require, then import (same objects both ways).
    for (const script of ['smoke.cjs', 'smoke.mjs']) {
      fs.copyFileSync(path.join(pkgDir, 'scripts', 'smoke', script), path.join(app, script));
      assert.equal(run(app, env, 'node', [script]), 'ok\n');
    }

    // Without its platform package, the package says which platform it has no addon for.
    const addonDir = path.join(app, 'node_modules', platformPackage);
    fs.renameSync(addonDir, `${addonDir}.away`);
    const missing = spawnSync('node', ['smoke.cjs'], { cwd: app, env, encoding: 'utf8' });
    fs.renameSync(`${addonDir}.away`, addonDir);
    assert.notEqual(missing.status, 0);
    assert.match(missing.stderr, new RegExp(`no native addon for this platform \\(${platform.currentPlatform()}\\): the package ${platformPackage} is not installed`));

    // The type check: typescript, idb and Dexie from this package's devDependencies; the
    // package's own types from the tarball. Both with and without "dom" in "lib".
    for (const dep of ['typescript', 'idb', 'dexie']) {
      fs.symlinkSync(path.join(pkgDir, 'node_modules', dep), path.join(app, 'node_modules', dep), 'dir');
    }
    fs.copyFileSync(path.join(__dirname, 'install', 'sample.ts'), path.join(app, 'sample.ts'));
    for (const lib of [['ES2022'], ['ES2022', 'DOM']]) {
      fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib, strict: true, types: [] },
        files: ['sample.ts'],
      }));
      run(app, env, 'node', [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', app]);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
