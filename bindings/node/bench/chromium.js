'use strict';
// Runs bench/workload.js once in headless Chromium, on Chromium's own IndexedDB (a fresh
// profile directory on disk), and prints its results as one line of JSON, as bench/system.js
// does: `node bench/chromium.js N CITIES_JSON`. A local page on 127.0.0.1 loads the workload
// and the records from this process's HTTP server and posts its results back.
// Exits with status 2 and a message when `chromium` is not installed (Debian: apt-get install
// chromium).
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { makeRecords } = require('./workload.js');

const PAGE = `<!doctype html><meta charset="utf-8"><title>indexa bench</title>
<script src="/workload.js"></script>
<script>
(async () => {
  let body;
  try {
    const records = await (await fetch('/records.json')).json();
    const steps = await indexaWorkload.runWorkload(indexedDB, IDBKeyRange, records, () => performance.now());
    body = JSON.stringify({ steps });
  } catch (e) {
    body = JSON.stringify({ error: String(e && e.stack || e) });
  }
  await fetch('/result', { method: 'POST', body });
})();
</script>`;

/** The Chromium binary, or null. */
function chromiumBinary() {
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() !== '') return r.stdout.trim();
  }
  return null;
}

async function main() {
  const [nText, citiesPath] = process.argv.slice(2);
  const n = Number(nText);
  const binary = chromiumBinary();
  if (binary === null) {
    console.error('chromium is not installed: the Chromium comparison is skipped (Debian: apt-get install chromium)');
    process.exit(2);
  }
  const records = JSON.stringify(makeRecords(JSON.parse(fs.readFileSync(citiesPath, 'utf8')), n));
  const workload = fs.readFileSync(path.join(__dirname, 'workload.js'));
  const profile = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'chromium-bench-'));
  let browser = null;
  const result = await new Promise((resolve, reject) => {
    const server = http.createServer((request, response) => {
      if (request.method === 'POST' && request.url === '/result') {
        let body = '';
        request.on('data', (c) => { body += c; });
        request.on('end', () => {
          response.end('ok');
          server.close();
          resolve(JSON.parse(body));
        });
        return;
      }
      const files = { '/': ['text/html', PAGE], '/workload.js': ['text/javascript', workload], '/records.json': ['application/json', records] };
      const file = files[request.url];
      if (!file) {
        response.statusCode = 404;
        response.end();
        return;
      }
      response.setHeader('content-type', file[0]);
      response.end(file[1]);
    });
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}/`;
      browser = spawn(binary, [
        '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
        `--user-data-dir=${profile}`, url,
      ], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      let stderr = '';
      browser.stderr.on('data', (c) => { stderr += c; });
      browser.on('exit', (code) => reject(new Error(`chromium exited (${code}) before the page reported: ${stderr.slice(-2000)}`)));
    });
  }).finally(async () => {
    if (browser !== null && browser.exitCode === null) {
      browser.removeAllListeners('exit');
      const exited = new Promise((resolve) => browser.once('exit', resolve));
      // Chromium's own child processes go with it: they share its process group.
      process.kill(-browser.pid, 'SIGKILL');
      await exited;
    }
  });
  fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  if (result.error) throw new Error(`the page failed: ${result.error}`);
  process.stdout.write(`${JSON.stringify({ system: 'chromium', n, steps: result.steps })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
