// Signs requests with the official oci-common package (npm), for the
// conformance test conf_oci_common.c.
//
// usage: node oci_common_sign.js <node_modules dir> <jobs.json>
// jobs.json: [{key_file, passphrase, tenancy, user, fingerprint, method, url,
//              date, body_file (or null), content_type (or null), exclude_body}]
// prints: [{authorization, host, content_length, content_type, x_content_sha256}]
//
// oci-common (the TypeScript SDK) signs x-date and orders the body headers
// "content-type content-length x-content-sha256" by default. The Go/Python
// SDKs sign date, with the body headers in "content-length content-type
// x-content-sha256" order. DefaultRequestSigner.headersToSign is the knob:
// pass 1 lets oci-common add and hash the body headers itself, pass 2 signs
// the exact Go/Python list with forceExcludeBody so nothing is appended.
"use strict";
const fs = require("fs");
const path = require("path");

const modules = process.argv[2];
const jobs = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const common = require(path.join(modules, "oci-common"));
const { DefaultRequestSigner, SimpleAuthenticationDetailsProvider } = common;

const BASE = ["date", "(request-target)", "host"];
const BODY = BASE.concat(["content-length", "content-type", "x-content-sha256"]);
const BODY_METHODS = ["POST", "PUT", "PATCH"];

async function signOne(job, signers) {
  let signer = signers.get(job.key_file);
  if (!signer) {
    const pem = fs.readFileSync(job.key_file, "utf8");
    const provider = new SimpleAuthenticationDetailsProvider(
      job.tenancy, job.user, job.fingerprint, pem, job.passphrase || null, null);
    signer = new DefaultRequestSigner(provider);
    signers.set(job.key_file, signer);
  }
  const headers = new Headers();
  headers.set("date", job.date);
  if (job.content_type) headers.set("content-type", job.content_type);
  const request = { method: job.method, uri: job.url, headers };
  // oci-common hashes bodies as text (UTF-8).
  if (job.body_file) request.body = fs.readFileSync(job.body_file, "utf8");

  const hasBody = BODY_METHODS.includes(job.method.toUpperCase());
  if (hasBody && !job.exclude_body) {
    DefaultRequestSigner.headersToSign = BASE;
    await signer.signHttpRequest(request, false); // adds the body headers
    headers.delete("authorization");
    DefaultRequestSigner.headersToSign = BODY;
    await signer.signHttpRequest(request, true);
  } else {
    DefaultRequestSigner.headersToSign = BASE;
    await signer.signHttpRequest(request, true);
  }
  return {
    authorization: headers.get("authorization"),
    host: headers.get("host"),
    content_length: headers.get("content-length"),
    content_type: headers.get("content-type"),
    x_content_sha256: headers.get("x-content-sha256"),
  };
}

(async () => {
  const signers = new Map();
  const out = [];
  for (const job of jobs) out.push(await signOne(job, signers));
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(`oci_common_sign: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
