package lsp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The documents a server holds, as toolkit sent their texts, and the
// diagnostics it gives of them.

// Result is a server's diagnostics of a text.
type Result struct {
	Diagnostics []Diagnostic
	// UTF16 says the columns count UTF-16 code units (ByteColumn).
	UTF16 bool
}

// Diagnose gives the server text as the content of the document at path
// and returns its diagnostics of that text: ErrLoading while it is not
// initialized when ctx ends, ErrGone once it has ended, ctx's cause when
// it did not answer in time. A text it has had and answered for already
// is answered at once.
func (s *Server) Diagnose(ctx context.Context, path, languageID, text string) (Result, error) {
	if err := s.wait(ctx); err != nil {
		return Result{}, err
	}
	if s.initErr != nil {
		return Result{}, fmt.Errorf("could not start: %s", s.Why())
	}
	uri := URI(path)
	version, sent, err := s.send(ctx, uri, languageID, text)
	if err != nil {
		return Result{}, err
	}
	if s.pull {
		var rep documentDiagnosticReport
		if err := s.conn.Call(ctx, "textDocument/diagnostic", documentDiagnosticParams{TextDocument: documentID{URI: uri}}, &rep); err != nil {
			return Result{}, s.failed(ctx, err)
		}
		if rep.Kind == "full" {
			return Result{Diagnostics: rep.Items, UTF16: s.utf16}, nil
		}
		// A server that answers pulls only for some documents, or said
		// "unchanged" though asked for none: its pushes decide.
	}
	return s.published(ctx, uri, version, sent)
}

// wait waits for the server to be initialized: ErrLoading where ctx ends
// first (a server that is ready is ready, whatever the time left).
func (s *Server) wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	default:
	}
	select {
	case <-s.ready:
		return nil
	case <-s.gone:
		return ErrGone
	case <-ctx.Done():
		return ErrLoading
	}
}

// send makes text the document's content: opened, or changed to it at the
// next version, unless it is its content already. It returns the version,
// and the count of publishes before the text was sent.
func (s *Server) send(ctx context.Context, uri, languageID, text string) (int, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used++
	d := s.docs[uri]
	switch {
	case d == nil:
		d = &document{version: 1, text: text, sent: s.seq}
		s.docs[uri] = d
		delete(s.pushed, uri) // what was published of it closed is not of this text
		s.closeOld(ctx)
		if err := s.conn.Notify(ctx, "textDocument/didOpen", didOpenParams{textDocumentItem{URI: uri, LanguageID: languageID, Version: 1, Text: text}}); err != nil {
			return 0, 0, s.failed(ctx, err)
		}
	case d.text != text:
		d.version++
		d.text = text
		d.sent = s.seq
		if err := s.conn.Notify(ctx, "textDocument/didChange", didChangeParams{versionedDocument{URI: uri, Version: d.version}, []wholeText{{Text: text}}}); err != nil {
			return 0, 0, s.failed(ctx, err)
		}
	}
	d.used = s.used
	return d.version, d.sent, nil
}

// CloseStale closes the documents held open whose text is no longer
// their file's (stale says it is not): a file changed on disk since, by
// a command whose call did not check it, is read by the server from disk
// again, not from a text toolkit gave it long ago.
func (s *Server) CloseStale(ctx context.Context, stale func(path, text string) bool) {
	// The files are read without the lock, which the connection's
	// reading loop takes for each publish.
	s.mu.Lock()
	texts := make(map[string]string, len(s.docs))
	for uri, d := range s.docs {
		texts[uri] = d.text
	}
	s.mu.Unlock()
	for uri, text := range texts {
		if !stale(PathOf(uri), text) {
			continue
		}
		s.mu.Lock()
		if d := s.docs[uri]; d != nil && d.text == text {
			s.close(ctx, uri)
		}
		s.mu.Unlock()
	}
}

// close closes the document at uri, with s.mu held: what was published
// of it is no longer of a text toolkit gave.
func (s *Server) close(ctx context.Context, uri string) {
	delete(s.docs, uri)
	delete(s.pushed, uri)
	_ = s.conn.Notify(ctx, "textDocument/didClose", didCloseParams{documentID{URI: uri}})
}

// closeOld closes the least recently used documents past MaxDocuments.
func (s *Server) closeOld(ctx context.Context) {
	for len(s.docs) > MaxDocuments {
		oldest := ""
		for uri, d := range s.docs {
			if oldest == "" || d.used < s.docs[oldest].used {
				oldest = uri
			}
		}
		s.close(ctx, oldest)
	}
}

// published waits for a publish of the document's version, then for
// Settle more; from a server that says no version, for the publishes after
// the text was sent (sent) to be quiet for UnversionedSettle.
func (s *Server) published(ctx context.Context, uri string, version int, sent uint64) (Result, error) {
	var got *published
	var settle <-chan time.Time
	for {
		s.mu.Lock()
		p, ok := s.pushed[uri]
		now, versioned := s.now, s.versioned
		s.mu.Unlock()
		switch {
		case ok && p.version != nil && *p.version == version:
			if got == nil && s.Settle > 0 {
				settle = time.After(s.Settle)
			}
			got = &p
		case ok && !versioned && p.version == nil && p.seq > sent:
			// Quiet since the last publish, and taken then.
			got = &p
			settle = time.After(time.Until(p.at.Add(UnversionedSettle)))
		}
		if got != nil && settle == nil {
			return Result{Diagnostics: got.diags, UTF16: s.utf16}, nil
		}
		select {
		case <-now:
		case <-settle:
			s.mu.Lock()
			quiet := s.pushed[uri].seq == got.seq
			s.mu.Unlock()
			if quiet || got.version != nil {
				return Result{Diagnostics: got.diags, UTF16: s.utf16}, nil
			}
		case <-s.gone:
			return Result{}, ErrGone
		case <-ctx.Done():
			return Result{}, context.Cause(ctx)
		}
	}
}

// failed is the error of a message the server did not take or answer: a
// server whose connection broke is about to be gone, and is waited for
// a moment, so that what is said is that it ended, and how.
func (s *Server) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var rpc *jsonrpc2.Error
	if errors.As(err, &rpc) {
		return err // an answer: the server is there
	}
	select {
	case <-s.gone:
		return ErrGone
	case <-time.After(time.Second):
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Quiet waits until the server has published nothing for gap, or for at
// most most: the publishes for other files that a change makes come just
// after those of the file changed, from most servers.
func (s *Server) Quiet(ctx context.Context, gap, most time.Duration) {
	end := time.After(most)
	for {
		s.mu.Lock()
		now := s.now
		s.mu.Unlock()
		select {
		case <-now:
		case <-time.After(gap):
			return
		case <-end:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Publish is a server's last publish for a document: its diagnostics,
// and its place among all its publishes (a later publish has a larger
// Seq).
type Publish struct {
	Seq         uint64
	Diagnostics []Diagnostic
}

// Published is the last publish of every document the server published
// for, by URI (PathOf names its file): what tells a change's diagnostics
// elsewhere from those there before it.
func (s *Server) Published() map[string]Publish {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Publish, len(s.pushed))
	for uri, p := range s.pushed {
		out[uri] = Publish{Seq: p.seq, Diagnostics: p.diags}
	}
	return out
}
