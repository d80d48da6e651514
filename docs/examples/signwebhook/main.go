// Command signwebhook delivers a JSON payload to a Sourcebase workflow
// trigger that uses the hmac-sha256 scheme: it signs the exact bytes it
// sends with the trigger's secret and puts `sha256=<hex>` in the trigger's
// header. docs/webhooks.md shows this file; a test runs it.
//
//	WEBHOOK_URL=... WEBHOOK_SECRET=... go run ./docs/examples/signwebhook '{"name":"Acme"}'
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	url, secret := os.Getenv("WEBHOOK_URL"), os.Getenv("WEBHOOK_SECRET")
	header := os.Getenv("WEBHOOK_HEADER") // the trigger's headerName; X-Hub-Signature when unset
	if header == "" {
		header = "X-Hub-Signature"
	}
	if url == "" || secret == "" || len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: WEBHOOK_URL=... WEBHOOK_SECRET=... signwebhook '<json payload>'")
		os.Exit(2)
	}
	body := []byte(os.Args[1])

	// The signature covers the body exactly as sent: sign the bytes, then
	// send those same bytes (never re-encode them in between).
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	signature := "sha256=" + hex.EncodeToString(mac.Sum(nil))

	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(header, signature)
	if id := os.Getenv("DELIVERY_ID"); id != "" {
		req.Header.Set("X-GitHub-Delivery", id) // one run per delivery id
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	fmt.Printf("%d %s\n", res.StatusCode, answer)
	if res.StatusCode != http.StatusAccepted {
		os.Exit(1)
	}
}
