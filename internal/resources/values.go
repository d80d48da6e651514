package resources

import "fmt"

func ptr(f float64) *float64 { return &f }

func fieldIndex(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }
