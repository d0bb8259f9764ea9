package openai

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// While a reply streams, the transport still holds the request; it must
// no longer hold the body, which for a long conversation is most of it.
func TestTheRequestLetsGoOfItsBodyOnceTheResponseBegins(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		if len(got) != 64<<10 {
			t.Errorf("server got %d bytes; want 64 KiB", len(got))
		}
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-release // the reply has begun and waits on the model
	}))
	defer srv.Close()
	defer close(release)
	d := doer{client: newRetryClient(withDefaults(Config{BaseURL: srv.URL, RetryWaitMin: time.Millisecond}))}
	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewBuffer(bytes.Repeat([]byte("x"), 64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := d.Do(req)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	defer resp.Body.Close()
	if req.Body != nil || req.GetBody != nil {
		t.Errorf("go-openai's request still holds its body")
	}
	again, err := resp.Request.GetBody()
	if err != nil {
		t.Fatalf("GetBody: %v", err)
	}
	if n, _ := io.Copy(io.Discard, again); n != 0 {
		t.Errorf("the sent request can still produce %d bytes of body; want none", n)
	}
	if n, _ := io.Copy(io.Discard, resp.Request.Body); n != 0 {
		t.Errorf("the sent request's body still reads %d bytes; want none", n)
	}
}

// While the model is awaited nothing holds the body's bytes but the
// attempt writing them: a retry marshals them again.
func TestTheFirstAttemptTakesTheBodyAndRetriesMarshalItAgain(t *testing.T) {
	h := &heldBody{b: []byte("first")}
	read := func() string {
		t.Helper()
		r, err := h.reader()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		return string(b)
	}
	if got := read(); got != "first" { // retryablehttp measuring the body
		t.Fatalf("the measuring reader read %q", got)
	}
	h.marshalAgain(func() ([]byte, error) { return []byte("again"), nil })
	if got := read(); got != "first" {
		t.Fatalf("the first attempt read %q; want the marshalled bytes", got)
	}
	if h.b != nil {
		t.Fatalf("the body is still held once the first attempt has it")
	}
	if got := read(); got != "again" {
		t.Fatalf("a retry read %q; want the body marshalled again", got)
	}
}

// Over HTTP/2 the transport keeps an attempt's body open until the
// response arrives; once read, it must no longer hold the bytes.
func TestABodyReadToItsEndLetsGoOfItsBytes(t *testing.T) {
	h := &heldBody{b: bytes.Repeat([]byte("x"), 64<<10)}
	r, err := h.reader()
	if err != nil {
		t.Fatal(err)
	}
	h.release()
	if n, _ := io.Copy(io.Discard, r); n != 64<<10 {
		t.Fatalf("read %d bytes; want 64 KiB", n)
	}
	if size := r.(*bodyReader).r.Size(); size != 0 {
		t.Fatalf("the open body still holds %d bytes once read", size)
	}
}
