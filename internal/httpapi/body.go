package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// ReadBody reads the whole request body, at most MaxBodyBytes; a larger
// body is apperr.ErrTooLarge (413).
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errBodyTooLarge
	}
	if err != nil {
		return nil, apperr.Invalid("", "could not be read: %v", err)
	}
	return b, nil
}
