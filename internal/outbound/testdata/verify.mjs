// Checks messages with standardwebhooks, the Standard Webhooks reference
// implementation (pinned in the repository's package.json), so that a bug
// shared by our Sign and Verify cannot hide.
//
// Reads a JSON array on stdin, one case per message:
//   {"secret": "whsec_...", "headers": {"Webhook-Id": "...", ...},
//    "body": "<standard base64 of the raw body>",
//    "id": "...", "timestamp": <Unix seconds>}
// and prints a JSON array with, per case:
//   {"verified": true|false, "error": "<why verify refused>",
//    "signature": "<the reference's own signature of id.timestamp.body>"}
// The body travels as base64 so that every byte arrives unchanged.
import { Buffer } from "node:buffer";
import { Webhook } from "standardwebhooks";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const results = cases.map((c) => {
  const body = Buffer.from(c.body, "base64");
  const wh = new Webhook(c.secret);
  const result = { verified: false, error: "", signature: wh.sign(c.id, new Date(c.timestamp * 1000), body) };
  try {
    wh.verify(body, c.headers);
    result.verified = true;
  } catch (err) {
    result.error = String(err && err.message ? err.message : err);
  }
  return result;
});
process.stdout.write(JSON.stringify(results));
