package outbound_test

import (
	"fmt"
	"time"

	"github.com/sourcebase/sourcebase/internal/outbound"
)

// Signing the Standard Webhooks specification's test message.
func ExampleSign() {
	sig, err := outbound.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(sig)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}

// During a secret rotation the message carries a signature per secret, and
// a receiver that knows only one of them accepts it.
func ExampleHeaders() {
	oldSecret, newSecret := outbound.NewSecret(), outbound.NewSecret()
	sent := time.Unix(1614265330, 0)
	body := []byte(`{"type":"run.completed","data":{"id":"run_1"}}`)

	h, err := outbound.Headers([]string{oldSecret, newSecret}, "msg_1", sent, body)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("Content-Type"))

	// The receiver, a few seconds later, knows only the new secret.
	err = outbound.Verify(newSecret, h, body, sent.Add(3*time.Second), outbound.DefaultTolerance)
	fmt.Println("verified:", err == nil)

	// A changed body is refused.
	err = outbound.Verify(newSecret, h, []byte(`{"type":"run.failed"}`), sent, outbound.DefaultTolerance)
	fmt.Println(err)
	// Output:
	// msg_1 1614265330 application/json
	// verified: true
	// no v1 signature in the webhook-signature header matches the secret
}
