package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
)

// services is the outside world of the example: a deploy system and a mail
// server, reduced to HTTP endpoints that append receipts to one file in
// the work dir (receipts.log). A deploy or an email sent twice is the
// failure this example exists to prevent, so the test counts those lines.
//
// Like Stripe's API and most payment and mail APIs, the services take an
// Idempotency-Key header and answer a key they have seen with the first
// response (marked Idempotent-Replayed) instead of acting again. The
// agent's checkpoints alone cannot give exactly-once effects: a process
// killed after a deploy happened but before the checkpoint that records
// it was written will, on resume, ask again. Only the receiving side can
// recognise that second request; the idempotency key is what lets it.
type services struct {
	path  string            // receipts.log
	pause func(tool string) // called after each effect, before answering: the dangerous window
	log   io.Writer

	mu sync.Mutex // one request at a time keeps check-then-append atomic
}

// serviceRequest is the body of a request to a service, and the receipt
// line's description of it.
type serviceRequest struct {
	Service string `json:"service,omitempty"`
	Env     string `json:"env,omitempty"`
	Version string `json:"version,omitempty"`
	To      string `json:"to,omitempty"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// serviceReceipt is what a service answers.
type serviceReceipt struct {
	Receipt string `json:"receipt"`
	Action  string `json:"action"`
}

// register adds the service endpoints to mux.
func (s *services) register(mux *http.ServeMux) {
	mux.HandleFunc("POST /services/deploy", func(w http.ResponseWriter, r *http.Request) {
		s.handle(w, r, "deploy", "dep", func(q serviceRequest) (string, error) {
			if q.Service == "" || q.Env == "" || q.Version == "" {
				return "", errors.New("deploy needs service, env and version")
			}
			return fmt.Sprintf("deployed %s %s to %s", q.Service, q.Version, q.Env), nil
		})
	})
	mux.HandleFunc("POST /services/email", func(w http.ResponseWriter, r *http.Request) {
		s.handle(w, r, "send_email", "msg", func(q serviceRequest) (string, error) {
			if q.To == "" || q.Subject == "" {
				return "", errors.New("an email needs to and subject")
			}
			return fmt.Sprintf("emailed %s: %q", q.To, q.Subject), nil
		})
	})
}

func (s *services) handle(w http.ResponseWriter, r *http.Request, tool, prefix string, act func(serviceRequest) (string, error)) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		http.Error(w, "an Idempotency-Key header is required", http.StatusBadRequest)
		return
	}
	var q serviceRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
		http.Error(w, "bad request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	action, err := act(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if first, ok, err := s.lookup(key); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	} else if ok {
		fmt.Fprintf(s.log, "    [%s service] key seen before: answering with receipt %s, not acting again\n", tool, first.Receipt)
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, http.StatusOK, first)
		return
	}
	// Receipt ids come from the key, so two runs of the example can be
	// compared byte for byte; a real service would make up its own.
	sum := sha256.Sum256([]byte(key))
	rec := serviceReceipt{Receipt: prefix + "-" + hex.EncodeToString(sum[:4]), Action: action}
	if err := s.append(key, rec); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(s.log, "    [%s service] %s (receipt %s)\n", tool, action, rec.Receipt)
	s.pause(tool)
	writeJSON(w, http.StatusOK, rec)
}

// A receipt line is "RECEIPT<TAB>KEY<TAB>ACTION".

func (s *services) lookup(key string) (serviceReceipt, bool, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return serviceReceipt{}, false, nil
	}
	if err != nil {
		return serviceReceipt{}, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), "\t", 3)
		if len(fields) == 3 && fields[1] == key {
			return serviceReceipt{Receipt: fields[0], Action: fields[2]}, true, nil
		}
	}
	return serviceReceipt{}, false, sc.Err()
}

// append writes one receipt line in a single write and syncs it: the
// effect and its record are one event, as in a real service's database.
func (s *services) append(key string, rec serviceReceipt) error {
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	line := rec.Receipt + "\t" + key + "\t" + strings.ReplaceAll(rec.Action, "\n", " ") + "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a failed write shows as a short body to the client
}
