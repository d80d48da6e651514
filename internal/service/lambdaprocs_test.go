package service_test

import (
	"testing"

	"github.com/sourcebase/sourcebase/internal/service"
)

func TestFunctionsBelowOneVCPURunOneSchedulerThreadUnlessGOMAXPROCSIsSet(t *testing.T) {
	tests := []struct {
		memoryMB int
		env      string
		want     int
	}{
		{128, "", 1},
		{512, "", 1},
		{1024, "", 1},
		{1768, "", 1},
		{1769, "", 0}, // one whole vCPU: Go's default
		{3008, "", 0},
		{0, "", 0},    // not on Lambda
		{512, "4", 0}, // the environment decides
	}
	for _, tt := range tests {
		if got := service.LambdaProcs(tt.memoryMB, tt.env); got != tt.want {
			t.Errorf("LambdaProcs(%d MB, GOMAXPROCS=%q) = %d, want %d", tt.memoryMB, tt.env, got, tt.want)
		}
	}
}
