package webtest

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// One Chromium serves every test of the package: starting it is the slow
// part. Each test gets a browser context of its own (cookies, storage and
// cache apart, like a fresh profile), so tests share nothing and run in
// parallel.
var chrome struct {
	once sync.Once
	ctx  context.Context // the browser's first tab; cancelling it stops the browser
	stop func()
	dir  string
	err  error
}

// TestMain stops the package's browser, if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	if chrome.stop != nil {
		chrome.stop()
	}
	if chrome.dir != "" {
		os.RemoveAll(chrome.dir)
	}
	os.Exit(code)
}

func startChromium() {
	if _, err := os.Stat(chromium); err != nil {
		chrome.err = err
		return
	}
	if chrome.dir, chrome.err = os.MkdirTemp("", "parley-webtest-"); chrome.err != nil {
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Tabs of parallel tests are all in the background; their timers
		// and animation frames must run as a visible tab's do.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// New headless Chromium preloads the omnibox popup's WebUI in a
		// renderer of its own for every browser context, one per test:
		// about a quarter of the package's Chromium CPU, for a popup no
		// test opens (docs/testing.md).
		chromedp.Flag("disable-features", "WebUIOmniboxPopup,OmniboxAimPopupWebUIContent,WebUIOmniboxAimPopup"),
		chromedp.UserDataDir(chrome.dir),
		chromedp.WindowSize(1360, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithErrorf(log.Printf))
	chrome.ctx, chrome.stop = ctx, func() { cancel(); cancelAlloc() }
	// The first run starts the browser; it must have no timeout, which
	// would stop the browser with it.
	if err := chromedp.Do(ctx); err != nil {
		chrome.err = fmt.Errorf("start %s: %w", chromium, err)
	}
}

// browser returns a browser context of the package's Chromium, private to
// t and closed when t ends; each call of tab opens a new tab in it.
func browser(t *testing.T) context.Context {
	t.Helper()
	chrome.once.Do(startChromium)
	if os.IsNotExist(chrome.err) {
		t.Skipf("browser tests need %s (run .ci/install-browser.sh): %v", chromium, chrome.err)
	}
	if chrome.err != nil {
		t.Fatal(chrome.err)
	}
	ctx, cancel := chromedp.NewContext(chrome.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // creates the context and its first tab, without a timeout
		t.Fatalf("open a browser context: %v", err)
	}
	return ctx
}

// tab opens a new tab of the browser, closed when the test ends. An
// uncaught exception or unhandled rejection in its pages fails the test:
// a UI can look right while its scripts break.
func tab(t *testing.T, browserCtx context.Context) context.Context {
	t.Helper()
	var mu sync.Mutex
	var thrown []string
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			thrown = append(thrown, describe(e.ExceptionDetails))
			mu.Unlock()
		}
	}))
	t.Cleanup(func() {
		cancel()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range thrown {
			t.Errorf("uncaught JavaScript error in the page: %s", e)
		}
	})
	if err := chromedp.Do(ctx); err != nil { // opens the tab, again without a timeout
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

func describe(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	msg := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		msg += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", msg, d.URL, d.LineNumber)
}
