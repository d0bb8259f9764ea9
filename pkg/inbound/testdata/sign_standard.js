// A tenant's backend signing its messages to a Parley webhook channel with
// the official Standard Webhooks library. Reads JSON lines
// {secret, id, timestamp (unix seconds), body} from stdin and writes, per
// line, the webhook-signature header the library makes.
const { Webhook } = require("standardwebhooks");
const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  const sig = new Webhook(m.secret).sign(m.id, new Date(m.timestamp * 1000), m.body);
  process.stdout.write(sig + "\n");
});
