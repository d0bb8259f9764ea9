// Package webtest drives the admin UI and the chat widget in a real
// headless Chromium over the Chrome DevTools Protocol (chromedp), against
// the real API handler and runtime, a real store (SQLite, and PostgreSQL too
// when PARLEY_TEST_DATABASE_URL is set) and the fake LLM server. It has no
// code of its own; its tests skip when /usr/bin/chromium is absent
// (.ci/install-browser.sh installs it).
//
//	go test ./web/webtest -args -screenshots /tmp/shots
//
// writes screenshots of the admin bot page and the widget to that folder
// (by default they go to the test's temporary folder).
package webtest
