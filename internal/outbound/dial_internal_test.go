package outbound

import (
	"errors"
	"testing"
)

// TestDialCheckRefusesNonPublicAddresses exercises the dialer's Control
// check, which sees the very "ip:port" about to be connected to, after any
// DNS resolution.
func TestDialCheckRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	strict, loose := &Client{}, &Client{AllowLoopback: true}
	refused := []string{
		"127.0.0.1:443", "10.0.0.1:443", "169.254.169.254:80", "[::1]:443",
		"[::ffff:127.0.0.1]:443", "[fd00:ec2::254]:80", "100.64.0.1:443",
		"0.0.0.0:443", "[fe80::1%eth0]:443", "[::ffff:169.254.169.254]:80",
	}
	for _, address := range refused {
		err := strict.checkDial("hooks.example.com", address)
		var destErr *DestinationError
		if !errors.As(err, &destErr) || destErr.Host != "hooks.example.com" {
			t.Errorf("checkDial(%s) = %v, want a *DestinationError naming hooks.example.com", address, err)
		}
	}
	for _, address := range []string{"93.184.216.34:443", "[2606:4700::1]:443"} {
		if err := strict.checkDial("hooks.example.com", address); err != nil {
			t.Errorf("checkDial(%s) = %v, want nil", address, err)
		}
	}

	for _, address := range []string{"127.0.0.1:8080", "[::1]:8080", "[::ffff:127.0.0.1]:8080"} {
		if err := loose.checkDial("localhost", address); err != nil {
			t.Errorf("checkDial(%s) with AllowLoopback = %v, want nil", address, err)
		}
	}
	for _, address := range []string{"10.0.0.1:443", "169.254.169.254:80", "[fd00:ec2::254]:80"} {
		if err := loose.checkDial("hooks.example.com", address); err == nil {
			t.Errorf("checkDial(%s) with AllowLoopback = nil, want it refused", address)
		}
	}
	if err := strict.checkDial("hooks.example.com", "hooks.example.com:443"); err == nil {
		t.Error("checkDial(a name rather than an address) = nil, want an error")
	}
}
