// The peer of bench_client.c: the same GetSandbox loop done by Node with the
// official oci-common signer and fetch (sequential, one call at a time).
// usage: node bench_client_node.js <node_modules dir> <url> <key.pem> <tenancy> <user> <fingerprint> <seconds>
// (for https, the caller sets NODE_EXTRA_CA_CERTS to the test CA)
// prints: {"calls_per_sec": <n>, "cpu_us_per_call": <n>, "calls": <n>}
"use strict";
const fs = require("fs");
const path = require("path");
const [, , modules, url, keyPath, tenancy, user, fingerprint, secondsArg] = process.argv;
const common = require(path.join(modules, "oci-common"));
const { DefaultRequestSigner, SimpleAuthenticationDetailsProvider } = common;
// the Go/Python header list for GET, as the service and the emulator expect
DefaultRequestSigner.headersToSign = ["date", "(request-target)", "host"];
const provider = new SimpleAuthenticationDetailsProvider(tenancy, user, fingerprint,
  fs.readFileSync(keyPath, "utf8"), null, null);
const signer = new DefaultRequestSigner(provider);
const seconds = Number(secondsArg || 3);

async function once() {
  const headers = new Headers();
  headers.set("date", new Date().toUTCString());
  headers.set("opc-request-id", Math.random().toString(36).slice(2));
  const req = { method: "GET", uri: url, headers };
  await signer.signHttpRequest(req, false);
  const res = await fetch(url, { method: "GET", headers: req.headers });
  const body = await res.json();
  if (res.status !== 200 || !body.id) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
}

(async () => {
  for (let i = 0; i < 20; i++) await once(); // warm up (JIT, connection)
  const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
  const c0 = cpu();
  const t0 = process.hrtime.bigint();
  let n = 0;
  let elapsed = 0;
  while (elapsed < seconds) {
    await once();
    n++;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  }
  const usedUs = cpu() - c0;
  process.stdout.write(JSON.stringify({ calls_per_sec: n / elapsed, cpu_us_per_call: usedUs / n, calls: n }));
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
