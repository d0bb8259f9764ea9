package dialog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	_ "image/gif" // DecodeConfig's formats: the image types models take
	_ "image/jpeg"
	_ "image/png"
)

// imageHeader decodes the header of an image whose first bytes say it is
// mediaType and returns its dimensions. The first bytes alone (what
// sniffImage reads) pass for a PNG with anything after them; a header
// that decodes, of the type the bytes claim and at least one pixel each
// way, keeps such junk out of the message row and away from the model.
// Only the header is read, never the pixels.
func imageHeader(mediaType string, data []byte) (image.Config, error) {
	if mediaType == "image/webp" {
		// The standard library has no WebP decoder; its header is simple.
		return webpHeader(data)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, err
	}
	if "image/"+format != mediaType {
		return cfg, errors.New("the header is of another format")
	}
	return cfg, nil
}

// errWebP is a WebP header that does not decode.
var errWebP = errors.New("webp: invalid header")

// webpHeader reads a WebP file's RIFF header and its first chunk (VP8,
// VP8L or VP8X), as golang.org/x/image/webp's DecodeConfig does: the
// RIFF size must be the file's, and the chunk must carry its signature.
func webpHeader(data []byte) (image.Config, error) {
	if len(data) < 30 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WEBP" ||
		int64(binary.LittleEndian.Uint32(data[4:8]))+8 != int64(len(data)) {
		return image.Config{}, errWebP
	}
	chunk, body := string(data[12:16]), data[20:]
	if int64(binary.LittleEndian.Uint32(data[16:20])) > int64(len(body)) {
		return image.Config{}, errWebP
	}
	var w, h int
	switch chunk {
	case "VP8 ": // lossy: a frame tag, the start code, 14-bit sizes
		if body[3] != 0x9d || body[4] != 0x01 || body[5] != 0x2a {
			return image.Config{}, errWebP
		}
		w = int(binary.LittleEndian.Uint16(body[6:8]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(body[8:10]) & 0x3fff)
	case "VP8L": // lossless: a signature byte, then 14-bit sizes minus one
		if body[0] != 0x2f {
			return image.Config{}, errWebP
		}
		bits := binary.LittleEndian.Uint32(body[1:5])
		w, h = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
	case "VP8X": // extended: flags, then 24-bit sizes minus one
		w = int(uint32(body[4])|uint32(body[5])<<8|uint32(body[6])<<16) + 1
		h = int(uint32(body[7])|uint32(body[8])<<8|uint32(body[9])<<16) + 1
	default:
		return image.Config{}, errWebP
	}
	return image.Config{Width: w, Height: h}, nil
}
