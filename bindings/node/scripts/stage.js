'use strict';
// Stages the packages scripts/pack.sh packs, as directories under STAGE:
// - STAGE/platform: `indexa-indexeddb-<platform>` with the addon ADDON as
//   `indexa.<platform>.node`, and `os`/`cpu`/`libc` so npm installs it only where it runs;
// - STAGE/main: `indexa-indexeddb`, the files package.json lists, with the platform package as
//   an optional dependency.
// Both carry the repository's LICENSE-MIT and LICENSE-APACHE, and the main package's version
// (the versions move in lockstep).
//
//   node scripts/stage.js ADDON STAGE
const fs = require('node:fs');
const path = require('node:path');
const platform = require('../lib/platform.js');

const [addon, stage] = process.argv.slice(2);
const root = path.join(__dirname, '..');
const repoRoot = path.join(root, '..', '..');
const main = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const licenses = ['LICENSE-MIT', 'LICENSE-APACHE'];

function writePackage(dir, manifest, files) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [to, from] of Object.entries(files)) {
    fs.cpSync(from, path.join(dir, to), { recursive: true });
  }
  for (const license of licenses) fs.copyFileSync(path.join(repoRoot, license), path.join(dir, license));
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

const name = platform.currentPlatform();
const platformPackage = platform.packageName(name);
const addonFile = platform.addonFile(name);

writePackage(path.join(stage, 'platform'), {
  name: platformPackage,
  version: main.version,
  description: `The native addon of ${main.name} for ${name}`,
  license: main.license,
  repository: main.repository,
  main: addonFile,
  files: [addonFile, ...licenses],
  ...platform.npmFields(name),
  engines: main.engines,
}, {
  [addonFile]: addon,
  'README.md': writeReadme(stage, `# ${platformPackage}\n\nThe native addon of [${main.name}](https://www.npmjs.com/package/${main.name}) for ${name}. Install ${main.name}; it loads this package.\n`),
});

const { scripts, devDependencies, ...published } = main;
const mainFiles = { 'README.md': path.join(root, 'README.md') };
for (const entry of main.files) {
  if (!licenses.includes(entry)) mainFiles[entry] = path.join(root, entry);
}
writePackage(path.join(stage, 'main'), {
  ...published,
  optionalDependencies: { [platformPackage]: main.version },
}, mainFiles);

function writeReadme(dir, text) {
  const file = path.join(dir, 'platform-README.md');
  fs.writeFileSync(file, text);
  return file;
}
