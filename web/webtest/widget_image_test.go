package webtest

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// pixel is a 1x1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// TestWidgetAttachesOneImageTheModelSees picks a PNG with the widget's
// attach button (as the file chooser would hand it over), sends it with a
// question, and the model's reply says it saw the image.
func TestWidgetAttachesOneImageTheModelSees(t *testing.T) {
	t.Parallel()
	onSQLite(t, func(t *testing.T, w *world, ctx context.Context) {
		site := w.site(t)
		key := w.widgetKey(t, site.URL)
		pick := fmt.Sprintf(`(() => {
  const bytes = Uint8Array.from(atob(%s), c => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], 'dot.png', {type: 'image/png'}));
  const input = %s.querySelector('input[type=file]');
  input.files = dt.files;
  input.dispatchEvent(new Event('change'));
})()`, js(base64.StdEncoding.EncodeToString(pixel)), shadow)
		run(t, ctx, "attach and send",
			chromedp.Navigate(site.URL+"/?key="+key),
			until(shadow+`.querySelector('.launcher') !== null`),
			click(shadow+`.querySelector('.launcher')`),
			until(contains(shadow, ".msg.bot", "Hi! I am the Acme assistant.")),
			until(shadow+`.querySelector('button.attach') !== null && !`+shadow+`.querySelector('button.attach').hidden`),
			do(pick),
			until(contains(shadow, ".chip", "dot.png")),
			send("what is this?"),
			until(contains(shadow, ".msg.bot", `I see 1 image(s) and read "what is this?".`)),
			until(shadow+`.querySelector('.msg.user img') !== null`),
			until(shadow+`.querySelector('.chip').hidden`),
		)
		screenshot(t, ctx, "widget-image")
	})
}
