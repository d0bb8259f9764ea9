#!/usr/bin/env bash
# Installs Debian's Chromium at /usr/bin/chromium for the browser tests in
# web/webtest (admin UI and chat widget, driven over the DevTools Protocol).
# Idempotent: a quick no-op when it is already there. Without apt-get, or
# without root, it says so and exits 0: those tests then skip with a message.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "install-browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium) already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: apt-get not found; the browser tests will skip"
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install-browser: not root and no sudo; the browser tests will skip"
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# A mirror outage should cost the browser tests (they skip, saying why), not the whole CI run.
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium; }; then
  echo "install-browser: WARNING: apt-get install chromium failed; the browser tests will skip"
  exit 0
fi
echo "install-browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
