package dialog

import (
	"encoding/base64"
	"testing"
)

// FuzzImageHeader: whatever bytes a user sends, reading the header never
// panics, and a header that decodes has its dimensions.
func FuzzImageHeader(f *testing.F) {
	for _, b64 := range []string{
		"UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA",
		"UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
		"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4DwABAQEABRjYTgAAAABJRU5ErkJggg==",
	} {
		data, _ := base64.StdEncoding.DecodeString(b64)
		f.Add(data)
	}
	f.Add([]byte("RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mediaType, ok := sniffImage(data)
		if !ok {
			return
		}
		if cfg, err := imageHeader(mediaType, data); err == nil && (cfg.Width < 0 || cfg.Height < 0) {
			t.Fatalf("%s header of %dx%d", mediaType, cfg.Width, cfg.Height)
		}
	})
}
