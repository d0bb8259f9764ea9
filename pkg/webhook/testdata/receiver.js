// A webhook receiver as a tenant would write one with the official
// Standard Webhooks library: it verifies every POST with the secret named
// by ?secret=N (the Nth argument) and answers 204, or 401 with the
// library's error. It prints the port it listens on, then serves.
const http = require("http");
const { Webhook } = require("standardwebhooks");

const secrets = process.argv.slice(2);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const n = Number(new URL(req.url, "http://x").searchParams.get("secret") || 0);
    try {
      const payload = new Webhook(secrets[n]).verify(body, req.headers);
      res.writeHead(204, { "x-verified-type": payload.type });
      res.end();
    } catch (e) {
      res.writeHead(401, { "content-type": "text/plain" });
      res.end(String(e.message));
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
