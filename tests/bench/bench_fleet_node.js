// The Node side of bench_fleet.c: the same three phases over N sandboxes
// (all created, then the command in each, then all closed), each phase one
// Promise.all over the sandboxes, with the official oci-common signer and
// fetch (Node's own connection pool).
// usage: node bench_fleet_node.js <node_modules dir> <base url> <key.pem> <tenancy> <user> <fingerprint>
//        <project> <n> <poll ms> <command>
// (for https, the caller sets NODE_EXTRA_CA_CERTS to the test CA)
// prints one JSON line: {"n","ok","wall_ms","create_s","exec_s","c50","c99","x50","x99","peak_kb","throttled"}
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const [, , modules, base, keyPath, tenancy, user, fingerprint, project, nArg, pollArg, command] = process.argv;
const common = require(path.join(modules, "oci-common"));
const { DefaultRequestSigner, SimpleAuthenticationDetailsProvider } = common;
const provider = new SimpleAuthenticationDetailsProvider(tenancy, user, fingerprint,
  fs.readFileSync(keyPath, "utf8"), null, null);
const signer = new DefaultRequestSigner(provider);
const n = Number(nArg);
const pollMs = Number(pollArg);
let throttled = 0;

const BASE = ["date", "(request-target)", "host"];
const BODY = BASE.concat(["content-length", "content-type", "x-content-sha256"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One signed request, retried on 429 / 503 after retry-after (as an SDK user
// would); the answer's JSON (or null for an empty body).
async function call(method, rel, body) {
  const url = base + rel;
  for (let attempt = 0; ; attempt++) {
    const headers = new Headers();
    headers.set("date", new Date().toUTCString());
    headers.set("opc-request-id", crypto.randomBytes(8).toString("hex"));
    const req = { method, uri: url, headers };
    if (body !== undefined) {
      const text = JSON.stringify(body);
      req.body = text;
      headers.set("content-type", "application/json");
      headers.set("content-length", String(Buffer.byteLength(text)));
      headers.set("x-content-sha256", crypto.createHash("sha256").update(text).digest("base64"));
      DefaultRequestSigner.headersToSign = BODY;
    } else {
      DefaultRequestSigner.headersToSign = BASE;
    }
    await signer.signHttpRequest(req, true);
    const res = await fetch(url, { method, headers: req.headers, body: req.body });
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && attempt < 20) {
      if (res.status === 429) throttled++;
      await sleep(1000 * Number(res.headers.get("retry-after") || 1));
      continue;
    }
    if (res.status >= 400) throw new Error(`${method} ${rel}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }
}

async function waitFor(id, states) {
  for (let wait = 100; ; wait = Math.min(wait * 2, pollMs)) {
    const s = await call("GET", `/sandboxes/${id}`);
    if (states.includes(s.lifecycleState)) return s;
    if (s.lifecycleState === "FAILED") throw new Error(`sandbox ${id} FAILED`);
    await sleep(wait);
  }
}

async function create(slot) {
  const t0 = Date.now();
  const s = await call("POST", `/sandboxes?projectId=${encodeURIComponent(project)}`, { displayName: "bench-node" });
  await waitFor(s.id, ["RUNNING"]);
  slot.id = s.id;
  slot.create_ms = Date.now() - t0;
}

async function exec(slot) {
  const t0 = Date.now();
  const r = await call("POST", `/sandboxes/${slot.id}/commands/actions/runAndWait`, { command, timeout: "PT120S" });
  slot.ok = r.exitCode === 0;
  slot.exec_ms = Date.now() - t0;
}

async function close(slot) {
  await call("POST", `/sandboxes/${slot.id}/actions/stop`, {});
  await waitFor(slot.id, ["STOPPED"]);
  await call("DELETE", `/sandboxes/${slot.id}`);
}

function pct(v, p) {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  const k = Math.ceil((p * s.length) / 100);
  return s[k > 0 ? k - 1 : 0];
}

const settle = (ps) => Promise.allSettled(ps).then((rs) => {
  for (const r of rs) if (r.status === "rejected") process.stderr.write(`node: ${r.reason && r.reason.message}\n`);
});

(async () => {
  const slots = Array.from({ length: n }, () => ({ id: null, ok: false, create_ms: 0, exec_ms: 0 }));
  const t0 = Date.now();
  await settle(slots.map(create));
  const t1 = Date.now();
  await settle(slots.filter((s) => s.id).map(exec));
  const t2 = Date.now();
  await settle(slots.filter((s) => s.id).map(close));
  const t3 = Date.now();
  const cv = slots.map((s) => s.create_ms), xv = slots.map((s) => s.exec_ms);
  process.stdout.write(JSON.stringify({
    n, ok: slots.filter((s) => s.ok).length, wall_ms: t3 - t0, create_s: (t1 - t0) / 1000, exec_s: (t2 - t1) / 1000,
    c50: pct(cv, 50), c99: pct(cv, 99), x50: pct(xv, 50), x99: pct(xv, 99),
    peak_kb: process.resourceUsage().maxRSS, throttled,
  }) + "\n");
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
