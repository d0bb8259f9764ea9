package dialog

import "testing"

// A stream that lags keeps the signals that matter: typing never crowds
// out a changed or read signal, and the inbox (any dialog) hears only
// changes.
func TestSignalsKeepWhatMattersForALaggingStream(t *testing.T) {
	t.Parallel()
	s := newSignals()
	dialog, stopDialog := s.listen("t1", "d1")
	defer stopDialog()
	inbox, stopInbox := s.listen("t1", anyDialog)
	defer stopInbox()

	s.deliver("t1", "d1", signalChanged)
	s.deliver("t1", "d1", signalRead)
	for range 2 * signalBuffer {
		s.deliver("t1", "d1", signalTypingUser)
	}
	var heard []string
	for len(dialog) > 0 {
		heard = append(heard, <-dialog)
	}
	if len(heard) != signalBuffer || heard[0] != signalChanged || heard[1] != signalRead {
		t.Errorf("the dialog's stream heard %v; want changed and read first, then typing up to the buffer", heard)
	}
	if len(inbox) != 1 || <-inbox != signalChanged {
		t.Errorf("the inbox heard more than the change")
	}
}
