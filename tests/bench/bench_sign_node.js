// Signing rate of the official oci-common package, for bench_sign.c.
// usage: node bench_sign_node.js <node_modules dir> <key.pem> <seconds per request kind>
// prints: {"get": <signatures/s>, "post": <signatures/s>}
// Each iteration is what the SDK does per request: DefaultRequestSigner.
// signHttpRequest on a fresh header set (date signed, Go/Python list for GET;
// for POST oci-common adds and hashes the body headers itself).
"use strict";
const fs = require("fs");
const path = require("path");
const common = require(path.join(process.argv[2], "oci-common"));
const pem = fs.readFileSync(process.argv[3], "utf8");
const seconds = Number(process.argv[4] || 2);
const { DefaultRequestSigner, SimpleAuthenticationDetailsProvider } = common;
DefaultRequestSigner.headersToSign = ["date", "(request-target)", "host"];
const provider = new SimpleAuthenticationDetailsProvider("ocid1.tenancy.oc1..aaaa", "ocid1.user.oc1..bbbb",
  "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff", pem, null, null);
const signer = new DefaultRequestSigner(provider);
const body = "x".repeat(1024);

async function rate(method, url, withBody) {
  // CPU time of the process (user + system), as the C side measures.
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
  let n = 0;
  const start = cpu();
  let now = start;
  while (now - start < seconds) {
    const headers = new Headers();
    headers.set("date", new Date().toUTCString());
    const req = { method, uri: url, headers };
    if (withBody) req.body = body;
    await signer.signHttpRequest(req, false);
    n++;
    now = cpu();
  }
  return n / (now - start);
}

(async () => {
  const get = await rate("GET", "https://genai.us-chicago-1.oci.oraclecloud.com/20250101/sandboxes?compartmentId=ocid1.compartment.oc1..aaaa&limit=10", false);
  const post = await rate("POST", "https://genai.us-chicago-1.oci.oraclecloud.com/20250101/sandboxes/ocid1.sandbox.oc1..abc/commands", true);
  process.stdout.write(JSON.stringify({ get, post }));
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
