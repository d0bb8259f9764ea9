#!/usr/bin/env bash
# Rebuilds web/static/vendor/codemirror.js, the one-file ES module of CodeMirror 6 that the
# admin UI's JSON editor imports (no CDN, no build step at serve time), and
# web/static/vendor/codemirror.LICENSE.txt, the licenses of every package bundled in it.
# Versions are exact in scripts/codemirror/package.json and package-lock.json pins the rest,
# so the same inputs give the same file. Needs node and npm; run it after changing
# scripts/codemirror/entry.js or a version, and commit both outputs.
set -euo pipefail
cd "$(dirname "$0")/codemirror"

out=../../web/static/vendor
npm ci --no-audit --no-fund --silent
mkdir -p "$out"
# Pinned in package.json; the binary comes from the @esbuild/<platform> package npm installed.
npx --no-install esbuild entry.js --bundle --format=esm --minify --legal-comments=none --target=es2020 \
  --metafile=meta.json --outfile="$out/codemirror.js"

# The licenses of every package whose code is in the bundle.
node -e '
const fs = require("fs"), path = require("path");
const meta = JSON.parse(fs.readFileSync("meta.json", "utf8"));
const pkgs = new Set();
for (const input of Object.keys(meta.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) pkgs.add(m[1]);
}
let text = "Licenses of the packages bundled in codemirror.js (scripts/build-codemirror.sh).\n";
for (const name of [...pkgs].sort()) {
  const dir = path.join("node_modules", name);
  const { version, license } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const file = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  text += `\n==== ${name} ${version} (${license}) ====\n\n` + (file ? fs.readFileSync(path.join(dir, file), "utf8") : "(no license file in the package)\n");
}
fs.writeFileSync(process.argv[1], text);
' "$out/codemirror.LICENSE.txt"
rm -f meta.json
echo "build-codemirror: wrote $out/codemirror.js ($(wc -c <"$out/codemirror.js") bytes) and its licenses"
