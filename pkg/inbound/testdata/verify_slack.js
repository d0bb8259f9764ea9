// Slack's official verification (@slack/bolt's isValidSlackRequest), as a
// Bolt app checks every request Slack sends. Reads JSON lines
// {signingSecret, body, signature, timestamp} from stdin and writes, per
// line, "true" or "false".
const { isValidSlackRequest } = require("@slack/bolt");
const readline = require("readline");

const quiet = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel() {}, setName() {} };
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  const ok = isValidSlackRequest({
    signingSecret: m.signingSecret,
    body: m.body,
    headers: { "x-slack-signature": m.signature, "x-slack-request-timestamp": Number(m.timestamp) },
    logger: quiet,
  });
  process.stdout.write(String(ok) + "\n");
});
