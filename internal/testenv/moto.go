package testenv

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Moto starts AWS's API emulator moto (moto_server, in the machine image:
// SQS, EventBridge, CloudFormation, ...) for the test and returns its
// endpoint; the test is skipped where moto is not installed.
func Moto(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("moto_server"); err != nil {
		tb.Skip("moto_server is not installed (pip install 'moto[server]')")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("moto_server", "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(Scaled(30 * time.Second))
	for {
		if res, err := http.Get(endpoint + "/moto-api/"); err == nil {
			res.Body.Close()
			return endpoint
		}
		if time.Now().After(deadline) {
			tb.Fatal("moto_server did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
