// Command verifywebhook is a Sourcebase webhook endpoint: it verifies each
// delivery's Standard Webhooks signature with the endpoint's secret, with
// the standard library only, and prints the event it carries.
//
//	WEBHOOK_SECRET=whsec_... ADDR=:8090 go run ./docs/examples/verifywebhook
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// verify checks a delivery's signature and timestamp against the endpoint's secret.
func verify(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		return errors.New("no webhook-timestamp")
	}
	if d := time.Since(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("the timestamp is too far from now")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no signature matches")
}

func main() {
	secret, addr := os.Getenv("WEBHOOK_SECRET"), os.Getenv("ADDR")
	if secret == "" || addr == "" {
		log.Fatal("usage: WEBHOOK_SECRET=whsec_... ADDR=:8090 verifywebhook")
	}
	http.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if err := verify(secret, r.Header, body); err != nil {
			fmt.Println("refused:", err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev struct {
			ID, Type string
			Resource struct{ Type, ID string }
		}
		json.Unmarshal(body, &ev)
		// Deliveries come at least once: deduplicate on webhook-id.
		fmt.Println("verified", r.Header.Get("webhook-id"), ev.Type, ev.Resource.ID)
		w.WriteHeader(http.StatusNoContent)
	})
	log.Fatal(http.ListenAndServe(addr, nil))
}
